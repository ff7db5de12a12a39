package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lethe-mq/lethe/bench/internal/meter"
	"github.com/lethe-mq/lethe/bench/internal/result"
)

func sample() []result.Result {
	return []result.Result{
		{Key: "ceiling/segment-ingest/100", System: result.Ceiling, Scenario: "segment-ingest", Label: "raw segment ingest", Payload: 100, Unit: "msg/s", Value: 200_000, Count: 1},
		{Key: "ceiling/insert/100", System: result.Ceiling, Scenario: "insert", Label: "raw INSERT", Payload: 100, Unit: "msg/s", Value: 10_000, Count: 1},
		{Key: "ceiling/insert-latency/100", System: result.Ceiling, Scenario: "insert-latency", Payload: 100, Unit: "ms", Count: 1,
			Latency: &meter.Summary{Count: 10, P50: 1, P99: 2}},
		{Key: "lethe/push/b100/p1/100", System: result.Lethe, Scenario: "push", Label: "push batch 100", Payload: 100, Batch: 100, Partitions: 1,
			Unit: "msg/s", Value: 50_000, Count: 1, Ceiling: "ceiling/segment-ingest/100", SpreadMin: 45_000, SpreadMax: 55_000},
		{Key: "lethe/push/b1/p1/100", System: result.Lethe, Scenario: "push", Label: "push batch 1", Payload: 100, Batch: 1, Partitions: 1,
			Unit: "msg/s", Value: 5_000, Count: 1, Ceiling: "ceiling/insert/100"},
		{Key: "lethe/e2e/100", System: result.Lethe, Scenario: "e2e-latency", Label: "end-to-end latency", Payload: 100, Unit: "ms", Count: 1,
			Latency: &meter.Summary{Count: 10, P50: 3, P99: 8}, Ceiling: "ceiling/insert-latency/100"},
		{Key: "nats/push/b10/100", System: result.NATS, Scenario: "push", Label: "publish", Payload: 100, Batch: 10, Unit: "msg/s", Value: 80_000, Count: 1,
			Ceiling: "ceiling/segment-ingest/100"},
	}
}

func TestRatiosAgainstTheCeiling(t *testing.T) {
	var c Collector
	for _, r := range sample() {
		c.Add(r)
	}
	want := map[string]float64{"lethe/push/b100/p1/100": 0.25, "lethe/push/b1/p1/100": 0.5, "lethe/e2e/100": 4, "nats/push/b10/100": 0.4, "ceiling/insert/100": 0}
	for _, r := range c.Results() {
		if w, ok := want[r.Key]; ok && r.Ratio != w {
			t.Errorf("%s: ratio %.3f, want %.3f", r.Key, r.Ratio, w)
		}
	}
}

func TestWriteReport(t *testing.T) {
	var c Collector
	for _, r := range sample() {
		c.Add(r)
	}
	dir := t.TempDir()
	written, err := Write(dir, Meta{Mode: "quick", Command: "go run ./bench -quick"}, c.Results(), []int{100})
	if err != nil {
		t.Fatal(err)
	}
	if len(written) != 3 {
		t.Fatalf("wrote %v, want results.json, one chart and results.md", written)
	}
	md, err := os.ReadFile(filepath.Join(dir, "results.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"quick smoke run, not a measurement", "0.25 of segment ingest", "p99 ×4.0 of INSERT latency",
		"45,000–55,000", "| | 100 | 50,000 |", "throughput-100B.png"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("results.md lacks %q", want)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "throughput-100B.png")); err != nil || fi.Size() < 1000 {
		t.Errorf("chart missing or empty: %v", err)
	}
}

func TestProfilesSection(t *testing.T) {
	results := sample()
	if s := Profiles(results); s != "" {
		t.Fatalf("a run without -profile has a Profiles section:\n%s", s)
	}
	results[3].Profile = &result.Profile{File: "profiles/push-b100-p1-100B.txt", Seconds: 10, CPUSeconds: 12.5, CPUPerSecond: 1.25,
		TopFlat:   []result.ProfileFunc{{Name: "runtime.memmove", Percent: 12.5}},
		TopOwnCum: []result.ProfileFunc{{Name: "internal/httpapi.(*Server).push", Percent: 40}},
		PGExecMs:  5432, PGCalls: 1234,
		Statements: []result.ProfileStatement{{Query: "SELECT lethe.append($1, $2) | x", TopLevel: true, MeanMs: 3.1, Share: 80},
			{Query: "INSERT INTO lethe.txns", MeanMs: 0.9, Share: 30}},
		Cost: &result.PushCost{LetheCPUMicrosPerMsg: 25, LetheCPUMicrosPerReq: 2500, PGExecMicrosPerMsg: 10.9, PGExecMicrosPerReq: 1086,
			Ceiling: "ceiling/segment-ingest/100", CeilingMicrosPerRow: 1200, CeilingMicrosPerMsg: 12, CeilingMsgsPerRow: 100}}
	md := Markdown(Meta{Mode: "full"}, results, []int{100}, nil)
	for _, want := range []string{"## Profiles", "### lethe: push batch 100, 100 B ([profiles/push-b100-p1-100B.txt]",
		"1.25 s per second (12.50 s over 10 s)", "`runtime.memmove` 12.5 %", "`internal/httpapi.(*Server).push` 40.0 %",
		"5,432 ms of top-level execution in 1,234 calls", "`SELECT lethe.append($1, $2) / x` 3.10 ms mean, 80 %",
		"`INSERT INTO lethe.txns` (nested) 0.90 ms mean, 30 %",
		"lethe CPU 25.0 µs a message (2500 µs a request); PostgreSQL 10.9 µs a message (1086 µs a request)",
		"the ceiling (segment ingest) 1200.0 µs a row of 100 messages, 12.00 µs a message"} {
		if !strings.Contains(md, want) {
			t.Errorf("results.md lacks %q", want)
		}
	}
}

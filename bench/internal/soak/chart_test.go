package soak

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The chart is drawn from samples as a soak writes them, and a report
// written to a folder has its three files.
func TestReportWritesChartAndTables(t *testing.T) {
	var s []Sample
	for i := range 21 {
		m := float64(i)
		s = append(s, Sample{Elapsed: m * 60, DatabaseBytes: 40 << 20, WALBytes: 200 << 20, RSSBytes: 50 << 20,
			Tables: []TableSample{{Name: "lethe.segments", Total: 27 << 20}, {Name: "lethe.txns", Total: int64(m) << 19},
				{Name: "lethe.queues", Total: 8 << 10}}})
	}
	r := &Report{Samples: s, Verdict: Judge(20*time.Minute, s, nil)}
	dir := t.TempDir()
	written, err := r.Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(written) != 3 {
		t.Fatalf("wrote %v, want the JSON, the chart and the markdown", written)
	}
	if fi, err := os.Stat(filepath.Join(dir, ChartFile)); err != nil || fi.Size() < 10_000 {
		t.Fatalf("chart: %v, %v", fi, err)
	}
	var back Report
	raw, _ := os.ReadFile(filepath.Join(dir, JSONFile))
	if err := json.Unmarshal(raw, &back); err != nil || len(back.Samples) != 21 {
		t.Fatalf("soak.json does not read back: %v", err)
	}
	if back.Verdict.Pass || !hasProblem(back.Verdict, "lethe.txns") {
		t.Fatalf("the growing sidecar is not in the verdict: %+v", back.Verdict)
	}
}

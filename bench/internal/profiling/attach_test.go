package profiling

import (
	"math"
	"strings"
	"testing"

	"github.com/lethe-mq/lethe/bench/internal/result"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9*math.Max(1, math.Abs(b)) }

func TestPushCost(t *testing.T) {
	push := result.Result{Key: "lethe/push/b100/p1/1024", Scenario: "push", Batch: 100, Count: 10_000,
		Ceiling: "ceiling/segment-ingest/1024", Profile: &result.Profile{CPUSeconds: 2, PGExecMs: 500}}
	ceiling := result.Result{Key: "ceiling/segment-ingest/1024", Batch: 100, Count: 50_000, Profile: &result.Profile{PGExecMs: 1000}}
	c := PushCost(push, &ceiling)
	for name, got := range map[string][2]float64{
		"lethe CPU per message":   {c.LetheCPUMicrosPerMsg, 200},
		"lethe CPU per request":   {c.LetheCPUMicrosPerReq, 20_000},
		"PostgreSQL per message":  {c.PGExecMicrosPerMsg, 50},
		"PostgreSQL per request":  {c.PGExecMicrosPerReq, 5000},
		"ceiling per message":     {c.CeilingMicrosPerMsg, 20},
		"ceiling per row of 100":  {c.CeilingMicrosPerRow, 2000},
		"requests":                {float64(c.Requests), 100},
		"ceiling messages a row ": {float64(c.CeilingMsgsPerRow), 100},
	} {
		if !near(got[0], got[1]) {
			t.Errorf("%s: %v, want %v", name, got[0], got[1])
		}
	}
	if c.Ceiling != ceiling.Key {
		t.Errorf("ceiling %q, want %q", c.Ceiling, ceiling.Key)
	}
	if c := PushCost(push, nil); c == nil || c.Ceiling != "" || c.CeilingMicrosPerRow != 0 {
		t.Errorf("without a profiled ceiling: %+v, want lethe's cost alone", c)
	}
	push.Count = 0
	if c := PushCost(push, &ceiling); c != nil {
		t.Errorf("a window that counted nothing has a cost: %+v", c)
	}
}

// Attach puts each window's summary on its result, from a real CPU
// profile, and a cost on pushes only.
func TestAttach(t *testing.T) {
	top, err := TopOf(captureCPU(t), "cpu")
	if err != nil {
		t.Fatal(err)
	}
	pg := &Statements{ExecMs: 100, Calls: 10, Top: []Statement{
		{Query: "SELECT lethe.append($1,\n $2)", TopLevel: true, Calls: 10, TotalMs: 80, MeanMs: 8},
		{Query: "INSERT INTO lethe.txns " + strings.Repeat("x", 300), Calls: 10, TotalMs: 30, MeanMs: 3},
		{Query: "COMMIT", TopLevel: true, Calls: 10, TotalMs: 20, MeanMs: 2},
		{Query: "BEGIN", TopLevel: true, Calls: 10, TotalMs: 1, MeanMs: 0.1},
	}}
	p := &Profiler{found: map[string]*record{
		"lethe/push/b10/p1/100": {key: "lethe/push/b10/p1/100", name: "push-b10-p1-100B", seconds: 1, cpu: &top, pg: pg},
		"lethe/pop-ack/100":     {key: "lethe/pop-ack/100", name: "pop-ack-100B", seconds: 1, cpu: &top, pg: pg},
	}}
	results := []result.Result{
		{Key: "lethe/push/b10/p1/100", Scenario: "push", Batch: 10, Count: 1000},
		{Key: "lethe/pop-ack/100", Scenario: "pop-ack", Count: 1000},
		{Key: "lethe/sweep/100", Scenario: "sweep", Count: 1000},
	}
	p.Attach(results)
	push, pop, sweep := results[0].Profile, results[1].Profile, results[2].Profile
	if push == nil || pop == nil || sweep != nil {
		t.Fatalf("profiles attached: push %v, pop %v, sweep %v; want the first two", push, pop, sweep)
	}
	if push.Cost == nil || pop.Cost != nil {
		t.Fatalf("cost on push %v and pop %v, want on push only", push.Cost, pop.Cost)
	}
	if push.File != "profiles/push-b10-p1-100B.txt" || !near(push.CPUSeconds, float64(top.Total)/1e9) {
		t.Errorf("file %q, CPU %v s", push.File, push.CPUSeconds)
	}
	if len(push.TopFlat) != len(top.ByFlat(5)) || !strings.Contains(push.TopFlat[0].Name, "sha256") || len(push.TopOwnCum) == 0 || !strings.HasPrefix(push.TopOwnCum[0].Name, "bench/internal/profiling.") {
		t.Errorf("top flat %+v, own by cum %+v", push.TopFlat, push.TopOwnCum)
	}
	if len(push.Statements) != 3 || push.Statements[0].Query != "SELECT lethe.append($1, $2)" || !near(push.Statements[0].Share, 80) {
		t.Errorf("statements %+v, want the top 3 on one line with shares of the top-level total", push.Statements)
	}
	if n := len([]rune(push.Statements[1].Query)); n != queryChars+1 {
		t.Errorf("a long statement is %d characters, want %d and an ellipsis", n, queryChars)
	}
}

package report

import (
	"strings"
	"testing"

	"github.com/lethe-mq/lethe/bench/internal/result"
)

// A duration against its ceiling reads like a throughput: the ceiling's
// seconds over lethe's, so 0.25 is four times as slow as raw, and the
// figure keeps its milliseconds.
func TestDurationRatioAgainstTheCeiling(t *testing.T) {
	var c Collector
	c.Add(result.Result{Key: "ceiling/table-drop/100", System: result.Ceiling, Scenario: "table-drop", Payload: 100,
		Unit: "s", Value: 0.2, Count: 1})
	c.Add(result.Result{Key: "lethe/tier-drop/100", System: result.Lethe, Scenario: "tier-drop", Payload: 100,
		Unit: "s", Value: 0.8, Count: 1, Ceiling: "ceiling/table-drop/100"})
	all := c.Results()
	var drop result.Result
	for _, r := range all {
		if r.Key == "lethe/tier-drop/100" {
			drop = r
		}
	}
	if drop.Ratio != 0.25 {
		t.Fatalf("ratio %.3f, want 0.25 (0.2 s raw over 0.8 s)", drop.Ratio)
	}
	if got := ratio(drop, all); got != "0.25 of raw drop" {
		t.Fatalf("ratio column %q, want %q", got, "0.25 of raw drop")
	}
	if got := figure(drop); !strings.HasPrefix(got, "0.800 s") {
		t.Fatalf("figure %q, want 0.800 s", got)
	}
}

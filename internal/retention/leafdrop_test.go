package retention

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/internal/tier"
)

// A dropped leaf says what it held and what each part of its drop cost:
// the cycle's LeafDrops, the test route's answer and the INFO line carry
// its name, tier, bytes before DROP TABLE, and the detach, audit and drop
// work times, which together never exceed the cycle's own time.
func TestLeafDropIsTimedAndSized(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.configure("q", map[string]any{"retentionTier": "1w"})
	e.pushSegment("q", "p", 3)
	e.consume("q", "p", "g", 3)
	leaf := "segments_1w_p20300102"

	e.clock.Set(t0DayEnd.Add(7 * tier.Day))
	res := e.fullCycle()
	if res.LeavesDropped != len(res.LeafDrops) {
		t.Fatalf("%d leaves dropped but %d LeafDrops entries", res.LeavesDropped, len(res.LeafDrops))
	}
	var got *LeafDrop
	var sum time.Duration
	for i, d := range res.LeafDrops {
		if d.Detach < 0 || d.Audit < 0 || d.Drop < 0 {
			t.Fatalf("leaf %s: negative durations %+v", d.Leaf, d)
		}
		if d.Ended.Before(d.Started) || d.Ended.Sub(d.Started) < d.Work() {
			t.Fatalf("leaf %s: span %s to %s shorter than its work %s", d.Leaf, d.Started, d.Ended, d.Work())
		}
		sum += d.Work()
		if d.Leaf == leaf {
			got = &res.LeafDrops[i]
		}
	}
	if got == nil {
		t.Fatalf("LeafDrops %+v has no entry for %s", res.LeafDrops, leaf)
	}
	if got.Tier != "1w" || got.Bytes < 8192 || got.Detach <= 0 || got.Drop <= 0 {
		t.Fatalf("entry %+v; want tier 1w, at least a page of bytes, a detach and a drop that took time", *got)
	}
	if sum > res.Elapsed {
		t.Fatalf("the drops worked %s in a cycle of %s", sum, res.Elapsed)
	}

	answer := fullRunAnswer(res)
	if len(answer.LeafDrops) != len(res.LeafDrops) {
		t.Fatalf("the test route answers %d leafDrops, want %d", len(answer.LeafDrops), len(res.LeafDrops))
	}
	for _, a := range answer.LeafDrops {
		if a.Leaf == leaf && (a.Bytes != got.Bytes || a.DetachMs != millis(got.Detach) || a.DropMs != millis(got.Drop)) {
			t.Fatalf("the test route answers %+v for %+v", a, *got)
		}
	}
	line := regexp.MustCompile(`msg="retention leaf dropped" leaf=` + leaf +
		` tier=1w bytes=(\d+) detach_ms=[0-9.]+ audit_ms=[0-9.]+ drop_ms=[0-9.]+`)
	if m := line.FindStringSubmatch(e.logs.String()); m == nil || m[1] == "0" {
		t.Fatalf("no INFO line with the leaf's bytes and timings in:\n%s", lastLines(e.logs.String(), 20))
	}
}

// The settle steps' work time is counted: a cycle that moves pending
// frames to the held area reports it, within the cycle's time, and one
// that moves nothing reports none.
func TestSettleWorkIsCounted(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.configure("q", map[string]any{"retentionTier": "1w", "requiredGroups": []string{"late"}})
	e.pushSegment("q", "p", 2)
	if res := e.fullCycle(); res.SettleWork != 0 {
		t.Fatalf("nothing to settle, yet SettleWork %s", res.SettleWork)
	}
	e.clock.Advance(10 * tier.Day)
	res := e.fullCycle()
	if res.HeldMove.Frames != 2 || res.SettleWork <= 0 || res.SettleWork > res.Elapsed {
		t.Fatalf("held %+v, SettleWork %s in a cycle of %s; want 2 frames held and work time within the cycle",
			res.HeldMove, res.SettleWork, res.Elapsed)
	}
	if got := fullRunAnswer(res).SettleWorkMs; got != millis(res.SettleWork) {
		t.Fatalf("the test route answers settleWorkMs %v, want %v", got, millis(res.SettleWork))
	}
}

// lastLines is the end of a log, for a failure message.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

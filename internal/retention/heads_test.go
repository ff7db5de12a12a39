package retention

import (
	"testing"
	"time"

	"github.com/lethe-mq/lethe/internal/store"
	"github.com/lethe-mq/lethe/internal/tier"
)

// footprint is what the gauges and the status take from a queue's work.
type footprint struct {
	Partitions, Empty int
	OldestAt          time.Time
	WindowLag         float64
	Due               int
}

func footprints(work []queueWork) map[string]footprint {
	out := map[string]footprint{}
	for _, w := range work {
		f := footprint{Partitions: w.Partitions, Empty: w.EmptyPartitions, WindowLag: w.WindowLagSeconds, Due: len(w.Due)}
		if w.OldestAt != nil {
			f.OldestAt = w.OldestAt.UTC()
		}
		out[w.Queue] = f
	}
	return out
}

// remembered builds the work list the next cycle would, from the heads the
// last one left, checks that it says what reading every head says, and
// answers how many heads it read.
func (e *env) remembered() int {
	e.t.Helper()
	now := e.clock.Now()
	next, err := loadWork(e.ctx, e.pool, now, "", e.svc.heads.trusted(now))
	if err != nil {
		e.t.Fatal(err)
	}
	all, err := loadWork(e.ctx, e.pool, now, "", heads{})
	if err != nil {
		e.t.Fatal(err)
	}
	got, want := footprints(next), footprints(all)
	if len(got) != len(want) {
		e.t.Fatalf("with remembered heads %+v; reading every head %+v", got, want)
	}
	read := 0
	for q, f := range want {
		if got[q] != f {
			e.t.Fatalf("queue %s: with remembered heads %+v; reading every head %+v", q, got[q], f)
		}
	}
	for _, w := range next {
		read += w.HeadsRead
	}
	return read
}

// A queue with no deleting rule has its partitions' heads read once, then
// again only where the low watermark moved (here by a tier drop), or once
// they are headsMaxAge old; a queue with a rule has every head read every
// cycle. What the work list publishes is what reading every head says.
func TestWorklistReadsARulelessHeadOnceUntilItsWatermarkMoves(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.configure("plain", map[string]any{"retentionTier": "1w"})
	e.configure("kept", map[string]any{"retentionEnabled": true, "retentionSeconds": 60 * 86400})
	e.pushSegment("plain", "a", 1)
	e.pushSegment("plain", "b", 1)
	e.pushSegment("kept", "k", 1)

	if res := e.cycle(); res.HeadsRead != 3 {
		t.Fatalf("first cycle read %d heads; want all 3", res.HeadsRead)
	}
	if n := e.remembered(); n != 1 {
		t.Fatalf("the next work list reads %d heads; want 1, of the queue with a rule", n)
	}
	if res := e.cycle(); res.HeadsRead != 1 {
		t.Fatalf("second cycle read %d heads; want 1", res.HeadsRead)
	}

	e.clock.Advance(tier.Day)
	secondAt := e.clock.Now()
	e.pushSegment("plain", "a", 1) // a's head stays: nothing read again
	e.pushSegment("plain", "c", 1) // a new partition: its head is read
	e.cycle()                      // a day later: every head read again (headsMaxAge)
	e.pushSegment("plain", "c", 1)
	if n := e.remembered(); n != 1 {
		t.Fatalf("after appends to remembered partitions the work list reads %d heads; want 1", n)
	}
	e.clock.Advance(headsMaxAge)
	if n := e.remembered(); n != 4 {
		t.Fatalf("heads remembered for %v: the work list reads %d; want every one of 4", headsMaxAge, n)
	}

	// The leaf of t0's day goes: a's head moves to its second segment, b
	// is empty (not read), c keeps its head.
	e.clock.Set(t0DayEnd.Add(7 * tier.Day))
	if res := e.fullCycle(); res.TierDrop.Frames != 2 {
		t.Fatalf("the tier check dropped %+v; want the 2 messages of t0's day", res.TierDrop)
	}
	if n := e.remembered(); n != 2 {
		t.Fatalf("after the drop the work list reads %d heads; want 2: a's (watermark moved) and the rule's", n)
	}
	res := e.cycle()
	age := gaugeValue(t, e.svc.metrics.oldestAge.WithLabelValues("plain"))
	if res.HeadsRead != 2 || age != e.clock.Now().Sub(secondAt).Seconds() {
		t.Fatalf("after the drop: %d heads read, oldest age %v s; want 2 and %v s (a's second segment)",
			res.HeadsRead, age, e.clock.Now().Sub(secondAt).Seconds())
	}
	if n := e.remembered(); n != 1 {
		t.Fatalf("the next work list reads %d heads; want 1", n)
	}
}

// A leaf drop takes a leaf's rows out (DETACH) before its steps move the
// watermarks: meanwhile no remembered head is trusted, so the work list
// does not report a head that has left lethe.segments.
func TestWorklistTrustsNoHeadWhileALeafIsDetached(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.configure("plain", map[string]any{"retentionTier": "1w"})
	e.pushSegment("plain", "a", 1)
	e.pushSegment("plain", "b", 1)
	e.clock.Advance(tier.Day)
	e.pushSegment("plain", "a", 1)
	e.cycle()
	if n := e.remembered(); n != 0 {
		t.Fatalf("the work list reads %d heads; want none", n)
	}
	if err := store.DetachLeaf(e.ctx, e.pool, "segments_1w_p20300102"); err != nil {
		t.Fatal(err)
	}
	// remembered checks that the footprint is what reading every head
	// says: a's head is its second segment, b holds nothing it can read.
	if n := e.remembered(); n != 2 {
		t.Fatalf("with a leaf detached the work list reads %d heads; want both", n)
	}
}

func TestHeadsAreTrustedForHeadsMaxAge(t *testing.T) {
	h := heads{ReadAt: t0, Watermarks: []int64{3}}
	for _, c := range []struct {
		now  time.Time
		kept bool
	}{
		{t0, true},
		{t0.Add(headsMaxAge - time.Nanosecond), true},
		{t0.Add(headsMaxAge), false},
		{t0.Add(-time.Second), false}, // the clock went back
	} {
		got := h.trusted(c.now)
		if kept := len(got.Watermarks) == 1 && got.ReadAt.Equal(t0); kept != c.kept {
			t.Errorf("at %v: trusted %+v; want kept %v", c.now, got, c.kept)
		}
		if !c.kept && !got.ReadAt.Equal(c.now) {
			t.Errorf("at %v: heads read again are dated %v", c.now, got.ReadAt)
		}
	}
	if got := (heads{}).trusted(t0); len(got.Watermarks) != 0 || !got.ReadAt.Equal(t0) {
		t.Errorf("no heads yet: trusted %+v", got)
	}
}

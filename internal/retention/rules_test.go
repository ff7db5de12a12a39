package retention

import (
	"testing"
	"time"
)

func TestFreshQueueKeepsEverythingWhateverIsConsumed(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.pushSegment("q", "p", 3)
	e.pushSegment("q", "p", 2)
	e.consume("q", "p", "g", 5)
	e.consume("q", "p", "", 5)
	e.clock.Advance(400 * 24 * time.Hour)

	res := e.cycle()
	if got := res.Total(); got.Segments != 0 {
		t.Fatalf("a queue without rules lost %d segments; want none", got.Segments)
	}
	if !equalInts(e.segments("q", "p"), []int64{0, 3}) {
		t.Fatalf("segments = %v, want [0 3]", e.segments("q", "p"))
	}
	// The sidecar is the one thing purged on its own clock.
	if res.TxnsPurged != 5 {
		t.Fatalf("txns purged = %d, want 5", res.TxnsPurged)
	}
}

func TestRetentionEnabledWithoutWindowsSweepsNothing(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.configure("q", map[string]any{"retentionEnabled": true, "maxWaitTimeSeconds": 0})
	e.pushSegment("q", "p", 4)
	e.consume("q", "p", "g", 4)
	e.clock.Advance(400 * 24 * time.Hour)
	if got := e.cycle().Total(); got.Segments != 0 {
		t.Fatalf("deleted %d segments with retention on but no window; want none", got.Segments)
	}
	// A window without retentionEnabled is off too.
	e.configure("q", map[string]any{"retentionEnabled": false, "retentionSeconds": 60, "completedRetentionSeconds": 60})
	if got := e.cycle().Total(); got.Segments != 0 {
		t.Fatalf("deleted %d segments with windows but retentionEnabled false; want none", got.Segments)
	}
}

func TestRetentionSecondsDropsOldSegmentsConsumedOrNot(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.configure("q", map[string]any{"retentionEnabled": true, "retentionSeconds": 3600})
	e.pushSegment("q", "p", 3) // offsets 0..2 at t0
	e.consume("q", "p", "g", 1)
	e.clock.Advance(30 * time.Minute)
	e.pushSegment("q", "p", 2) // offsets 3..4 at t0+30m

	// A segment exactly as old as the window is not older than it.
	e.clock.Set(t0.Add(time.Hour))
	if got := e.cycle().Total(); got.Segments != 0 {
		t.Fatalf("at the boundary: deleted %d segments, want 0", got.Segments)
	}
	e.clock.Set(t0.Add(time.Hour + time.Microsecond))
	res := e.cycle()
	if res.Retention.Segments != 1 || res.Retention.Frames != 3 {
		t.Fatalf("retention deleted %+v, want 1 segment of 3 frames", res.Retention)
	}
	if !equalInts(e.segments("q", "p"), []int64{3}) || e.lowWatermark("q", "p") != 3 {
		t.Fatalf("segments %v, low watermark %d; want [3] and 3", e.segments("q", "p"), e.lowWatermark("q", "p"))
	}
	h := e.history("q")
	if len(h) != 1 || h[0].Rule != RuleRetention || *h[0].FromOffset != 0 || *h[0].ToOffset != 2 || h[0].Messages != 3 {
		t.Fatalf("history = %+v, want one retention row for offsets 0..2", h)
	}
	// Group g had read offset 0 only: it lost 1..2 unread.
	if len(h[0].Lost) != 1 || h[0].Lost[0].Group != "g" || h[0].Lost[0].Messages != 2 || *h[0].Lost[0].FromOffset != 1 {
		t.Fatalf("lost = %+v, want g lost 2 messages from offset 1", h[0].Lost)
	}

	e.clock.Set(t0.Add(90*time.Minute + time.Second))
	if res := e.cycle(); res.Retention.Segments != 1 {
		t.Fatalf("second window: deleted %+v, want the second segment", res.Retention)
	}
	if len(e.segments("q", "p")) != 0 || e.lowWatermark("q", "p") != 5 {
		t.Fatalf("segments %v, low %d; want none and 5", e.segments("q", "p"), e.lowWatermark("q", "p"))
	}
}

func TestCompletedRetentionStopsAtTheSlowestCursorInWholeSegments(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.configure("q", map[string]any{"retentionEnabled": true, "completedRetentionSeconds": 600})
	e.pushSegment("q", "p", 10)  // 0..9
	e.pushSegment("q", "p", 10)  // 10..19
	e.pushSegment("q", "p", 10)  // 20..29
	e.consume("q", "p", "g", 15) // committed 14: the bound is 15, inside the second segment

	e.clock.Advance(600 * time.Second)
	if got := e.cycle().Total(); got.Segments != 0 {
		t.Fatalf("inside the window: deleted %d, want 0", got.Segments)
	}
	e.clock.Advance(time.Second)
	res := e.cycle()
	if res.CompletedRetention.Segments != 1 || res.CompletedRetention.Frames != 10 {
		t.Fatalf("completed retention deleted %+v, want the first segment only", res.CompletedRetention)
	}
	// The straddling segment survives with its consumed head.
	if !equalInts(e.segments("q", "p"), []int64{10, 20}) || e.lowWatermark("q", "p") != 10 {
		t.Fatalf("segments %v, low %d; want [10 20] and 10", e.segments("q", "p"), e.lowWatermark("q", "p"))
	}
	if h := e.history("q"); len(h) != 1 || h[0].Rule != RuleCompletedRetention || len(h[0].Lost) != 0 {
		t.Fatalf("history = %+v, want one completed_retention row with no loss", h)
	}

	e.consume("q", "p", "g", 15) // committed 29
	if res := e.cycle(); res.CompletedRetention.Segments != 2 {
		t.Fatalf("after consuming everything: deleted %+v, want 2 segments", res.CompletedRetention)
	}
	if e.lowWatermark("q", "p") != 30 {
		t.Fatalf("low watermark %d, want 30", e.lowWatermark("q", "p"))
	}
}

func TestOneStalledGroupPinsThePartitionForEveryGroup(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.configure("q", map[string]any{"retentionEnabled": true, "completedRetentionSeconds": 60})
	e.pushSegment("q", "p", 5)
	e.consume("q", "p", "fast", 5)
	slow := e.pop("q", "p", "slow", 1) // leased, not acked: committed stays -1
	e.clock.Advance(time.Hour)

	if got := e.cycle().Total(); got.Segments != 0 {
		t.Fatalf("with a stalled group: deleted %d, want 0", got.Segments)
	}
	e.ack(slow.Messages, "slow")
	if got := e.cycle().Total(); got.Segments != 0 {
		t.Fatalf("slow group at offset 0 of 4: deleted %d, want 0", got.Segments)
	}
	e.consume("q", "p", "slow", 4)
	if got := e.cycle().CompletedRetention; got.Segments != 1 {
		t.Fatalf("every group done: deleted %+v, want 1 segment", got)
	}
}

func TestCompletedRetentionLeavesPartitionsWithoutConsumers(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.configure("q", map[string]any{"retentionEnabled": true, "completedRetentionSeconds": 60})
	e.pushSegment("q", "read", 2)
	e.pushSegment("q", "unread", 2)
	e.consume("q", "read", "g", 2)
	e.clock.Advance(time.Hour)

	res := e.cycle()
	if res.CompletedRetention.Segments != 1 {
		t.Fatalf("deleted %+v, want the consumed partition's segment only", res.CompletedRetention)
	}
	if len(e.segments("q", "unread")) != 1 || len(e.segments("q", "read")) != 0 {
		t.Fatalf("read: %v, unread: %v; want [] and one segment", e.segments("q", "read"), e.segments("q", "unread"))
	}
}

func TestBothRulesTogetherTakeWhicheverQualifies(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.configure("q", map[string]any{"retentionEnabled": true, "retentionSeconds": 7200, "completedRetentionSeconds": 60})
	e.pushSegment("q", "p", 2) // t0, consumed
	e.consume("q", "p", "g", 2)
	e.pushSegment("q", "p", 2) // t0, unread
	e.clock.Advance(time.Hour)
	res := e.cycle()
	if res.CompletedRetention.Segments != 1 || res.Retention.Segments != 0 {
		t.Fatalf("after an hour: %+v / %+v, want the consumed segment by completed retention", res.CompletedRetention, res.Retention)
	}
	e.clock.Advance(time.Hour + time.Second)
	res = e.cycle()
	if res.Retention.Segments != 1 {
		t.Fatalf("after two hours: %+v, want the unread segment by retention", res.Retention)
	}
}

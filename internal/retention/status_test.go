package retention

import (
	"testing"
	"time"
)

func TestStatusIsADryRunOfTheNextCycle(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.configure("q", map[string]any{"retentionEnabled": true, "retentionSeconds": 3600,
		"completedRetentionSeconds": 60, "maxWaitTimeSeconds": 1800})
	e.pushSegment("q", "p", 4) // t0: consumed below
	e.pushSegment("q", "p", 4) // t0: half consumed
	e.consume("q", "p", "g", 6)
	e.clock.Advance(20 * time.Minute)
	e.pushSegment("q", "p", 3) // t0+20m: unread
	e.clock.Advance(20 * time.Minute)
	e.pushSegment("q", "p", 2) // t0+40m: young
	e.pushSegment("q", "other", 1)
	e.clock.Advance(15 * time.Minute) // now t0+55m

	st, err := e.svc.Status(e.ctx, "q")
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Queues) != 1 {
		t.Fatalf("status has %d queues, want 1", len(st.Queues))
	}
	q := st.Queues[0]
	if q.Partitions != 2 || q.Segments != 5 || q.Messages != 14 || q.Bytes == 0 {
		t.Fatalf("footprint = %d partitions, %d segments, %d messages, %d bytes; want 2, 5, 14, >0",
			q.Partitions, q.Segments, q.Messages, q.Bytes)
	}
	if q.Cutoffs.Retention == nil || !q.Cutoffs.Retention.Equal(e.clock.Now().Add(-time.Hour)) || q.Cutoffs.MaxWait == nil {
		t.Fatalf("cutoffs = %+v", q.Cutoffs)
	}
	if q.OldestMessageAt == nil || !q.OldestMessageAt.Equal(t0) || q.OldestAgeSeconds != 55*60 {
		t.Fatalf("oldest = %v (%v s), want t0 (3300 s)", q.OldestMessageAt, q.OldestAgeSeconds)
	}
	// Completed retention takes segment 0, stops at the half-consumed one;
	// eviction then takes it and the unread one (older than 30 min).
	want := Plan{CompletedRetention: Amount{1, 4, 0}, MaxWait: Amount{2, 7, 0}}
	if q.NextCycle.CompletedRetention.Segments != want.CompletedRetention.Segments ||
		q.NextCycle.CompletedRetention.Frames != want.CompletedRetention.Frames ||
		q.NextCycle.MaxWait.Segments != want.MaxWait.Segments || q.NextCycle.MaxWait.Frames != want.MaxWait.Frames ||
		q.NextCycle.Retention.Segments != 0 {
		t.Fatalf("plan = %+v, want %+v (bytes aside)", q.NextCycle, want)
	}
	if n := e.count(`SELECT count(*) FROM lethe.segments`); n != 5 {
		t.Fatalf("the dry run deleted something: %d segments left", n)
	}

	res := e.cycle()
	if res.CompletedRetention != q.NextCycle.CompletedRetention || res.MaxWait != q.NextCycle.MaxWait ||
		res.Retention != q.NextCycle.Retention {
		t.Fatalf("the cycle did %+v / %+v / %+v; the plan said %+v", res.Retention, res.CompletedRetention, res.MaxWait, q.NextCycle)
	}
	if _, err := e.svc.Status(e.ctx, "nope"); err == nil {
		t.Fatal("status of an unknown queue did not fail")
	}
}

func TestWindowLagCountsCompletedRetentionOnlyForConsumedHeads(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.configure("timed", map[string]any{"retentionEnabled": true, "retentionSeconds": 3600})
	e.configure("done", map[string]any{"retentionEnabled": true, "completedRetentionSeconds": 60})
	e.configure("unread", map[string]any{"retentionEnabled": true, "completedRetentionSeconds": 60})
	for _, q := range []string{"timed", "done", "unread"} {
		e.pushSegment(q, "p", 2)
	}
	e.consume("done", "p", "g", 2)
	e.pop("unread", "p", "g", 1) // leased, not acked: nothing consumed
	e.clock.Advance(2 * time.Hour)

	st, err := e.svc.Status(e.ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"timed": 3600, "done": 7140, "unread": 0}
	for _, q := range st.Queues {
		if q.WindowLagSeconds != want[q.Queue] || q.OldestAgeSeconds != 7200 {
			t.Errorf("%s: lag %v s, oldest %v s; want lag %v, oldest 7200", q.Queue, q.WindowLagSeconds, q.OldestAgeSeconds, want[q.Queue])
		}
	}
	e.cycle() // the gauges are the work list's, before the cycle deletes
	for q, lag := range want {
		if v := gather(t, e.svc, "lethe_retention_window_lag_seconds", map[string]string{"queue": q}); v != lag {
			t.Errorf("gauge for %s = %v, want %v", q, v, lag)
		}
	}
}

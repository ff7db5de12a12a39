package retention

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/client/api"
)

func TestMaxWaitEvictsLeasedDataAndRecordsWhatEachGroupLost(t *testing.T) {
	t.Parallel()
	e := setup(t)
	// Only maxWaitTimeSeconds: retentionEnabled stays false.
	e.configure("q", map[string]any{"maxWaitTimeSeconds": 60, "leaseTime": 30, "retryDelay": 0})
	e.pushSegment("q", "p", 5) // 0..4
	leased := e.pop("q", "p", "g", 3)
	if len(leased.Messages) != 3 {
		t.Fatalf("g leased %d messages, want 3", len(leased.Messages))
	}
	e.consume("q", "p", "h", 5)
	e.clock.Advance(61 * time.Second)
	e.pushSegment("q", "p", 2) // 5..6, fresh

	res := e.cycle()
	if res.MaxWait.Segments != 1 || res.MaxWait.Frames != 5 {
		t.Fatalf("evicted %+v, want 1 segment of 5 frames", res.MaxWait)
	}
	if !equalInts(e.segments("q", "p"), []int64{5}) || e.lowWatermark("q", "p") != 5 {
		t.Fatalf("segments %v, low %d; want [5] and 5", e.segments("q", "p"), e.lowWatermark("q", "p"))
	}
	h := e.history("q")
	if len(h) != 1 || h[0].Rule != RuleMaxWait {
		t.Fatalf("history = %+v, want one max_wait row", h)
	}
	if len(h[0].Lost) != 1 || !isLoss(h[0].Lost[0], "g", 5, 0, 4, 3) {
		t.Fatalf("lost = %+v, want only g's 5 (offsets 0..4, 3 leased) (h had consumed everything)", h[0].Lost)
	}
	if n := e.count(`SELECT count(*) FROM lethe.dead_letters`); n != 0 {
		t.Fatalf("eviction wrote %d dead letters; it must not dead-letter", n)
	}

	// g's lease has expired; its next pop resumes past the gap.
	next := e.pop("q", "p", "g", 10)
	if len(next.Messages) != 2 || next.Messages[0].Offset != 5 || next.Messages[1].Offset != 6 {
		t.Fatalf("after the gap g got %+v, want offsets 5 and 6", offsets(next.Messages))
	}
	for _, r := range e.ack(next.Messages, "g") {
		if !r.Success {
			t.Fatalf("ack after the gap: %s", r.Error)
		}
	}
}

func TestEvictionWhileALeaseIsLiveLetsTheHolderAckAndMoveOn(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.configure("q", map[string]any{"maxWaitTimeSeconds": 60, "leaseTime": 600})
	e.pushSegment("q", "p", 3)
	leased := e.pop("q", "p", "g", 3)
	e.clock.Advance(2 * time.Minute)
	e.pushSegment("q", "p", 1)
	if res := e.cycle(); res.MaxWait.Segments != 1 {
		t.Fatalf("evicted %+v, want the leased segment", res.MaxWait)
	}
	// The lease still names the evicted messages: acking them settles it.
	for _, r := range e.ack(leased.Messages, "g") {
		if !r.Success {
			t.Fatalf("ack of an evicted, leased message: %s", r.Error)
		}
	}
	next := e.pop("q", "p", "g", 10)
	if len(next.Messages) != 1 || next.Messages[0].Offset != 3 {
		t.Fatalf("next pop got %v, want offset 3", offsets(next.Messages))
	}
}

func TestLateAckAfterTheHashIsPurgedCountsAsNotAcked(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.configure("q", map[string]any{"retryDelay": 0})
	e.pushSegment("q", "p", 1)
	msgs := e.consume("q", "p", "g", 1)
	// A repeated ack resolves through the sidecar while the hash is kept.
	if r := e.ack(msgs, "g"); !r[0].Success {
		t.Fatalf("repeated ack inside the window: %s", r[0].Error)
	}
	e.clock.Set(dayAfter(e.clock.Now()).Add(901 * time.Second))
	if res := e.fullCycle(); res.TxnsPurged != 1 {
		t.Fatalf("purged %d hashes, want 1", res.TxnsPurged)
	}
	// Once its day is dropped the hash is unknown: not acked.
	if r := e.ack(msgs, "g"); r[0].Success {
		t.Fatal("a repeated ack after the hash was purged succeeded; it must count as not acked")
	}

	// Redelivery over loss: a lease lost to expiry, then an ack with the
	// old lease after the purge, leaves the message with its new holder.
	e.pushSegment("q", "p", 1)
	first := e.pop("q", "p", "g", 1)
	e.clock.Set(dayAfter(e.clock.Now()).Add(1000 * time.Second)) // past leaseTime (300), its day and the 900 s floor
	again := e.pop("q", "p", "g", 1)
	if len(again.Messages) != 1 || again.Messages[0].TransactionID != first.Messages[0].TransactionID {
		t.Fatalf("expected redelivery of %s, got %v", first.Messages[0].TransactionID, again.Messages)
	}
	if res := e.fullCycle(); res.TxnsPurged != 1 {
		t.Fatalf("purged %d hashes, want 1", res.TxnsPurged)
	}
	r := e.ack(first.Messages, "g")
	if r[0].Success || !strings.Contains(r[0].Error, "redelivered") {
		t.Fatalf("late ack with the old lease = %+v, want not acked (redelivered)", r[0])
	}
	if r := e.ack(again.Messages, "g"); !r[0].Success {
		t.Fatalf("ack by the new holder: %s", r[0].Error)
	}
}

// dayAfter is the start of the UTC day after t's.
// An id lethe minted is decoded, not looked up in the sidecar: a repeated
// ack of it still resolves, to a message the group is done with, after
// every sidecar leaf of its time is gone; one of a lease lost to expiry is
// still not acked (redelivery over loss).
func TestLateAckOfAMintedIDOutlivesTheSidecar(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.configure("q", map[string]any{"retryDelay": 0})
	if _, err := e.eng.Push(e.ctx, []api.PushItem{{Queue: "q", Partition: "p", Payload: json.RawMessage(`1`)}}, ""); err != nil {
		t.Fatal(err)
	}
	done := e.consume("q", "p", "g", 1)
	e.pushSegment("q", "p", 1) // a producer's id beside it, for the purge to drop
	e.clock.Set(dayAfter(e.clock.Now()).Add(1000 * time.Second))
	if res := e.fullCycle(); res.TxnsPurged != 1 {
		t.Fatalf("purged %d hashes, want the producer's 1", res.TxnsPurged)
	}
	if r := e.ack(done, "g"); !r[0].Success {
		t.Errorf("a repeated ack of a minted id past the sidecar's window: %s; want success (already done)", r[0].Error)
	}
	if _, err := e.eng.Push(e.ctx, []api.PushItem{{Queue: "q", Partition: "p", Payload: json.RawMessage(`3`)}}, ""); err != nil {
		t.Fatal(err)
	}
	e.consume("q", "p", "g", 1) // the producer's message
	first := e.pop("q", "p", "g", 1)
	e.clock.Set(dayAfter(e.clock.Now()).Add(1000 * time.Second)) // past leaseTime (300)
	again := e.pop("q", "p", "g", 1)
	if len(again.Messages) != 1 || again.Messages[0].TransactionID != first.Messages[0].TransactionID {
		t.Fatalf("expected redelivery of %s, got %v", first.Messages[0].TransactionID, again.Messages)
	}
	if r := e.ack(first.Messages, "g"); r[0].Success || !strings.Contains(r[0].Error, "redelivered") {
		t.Errorf("an ack with the expired lease = %+v, want not acked: the message is with its new holder", r[0])
	}
}

func dayAfter(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day()+1, 0, 0, 0, 0, time.UTC)
}

func offsets(msgs []api.Message) []int64 {
	out := make([]int64, len(msgs))
	for i, m := range msgs {
		out[i] = m.Offset
	}
	return out
}

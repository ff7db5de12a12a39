package retention

import (
	"errors"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/internal/engine"
	"github.com/lethe-mq/lethe/internal/holds"
	"github.com/lethe-mq/lethe/internal/tier"
)

// While a queue is under a retention hold no rule deletes any of it:
// retentionSeconds, completedRetentionSeconds and maxWaitTimeSeconds do
// nothing, a tier check moves its finished messages to the held area
// instead of dropping them and keeps the held month, its dead letters are
// not purged, and neither the queue nor a dead letter can be deleted.
// Released, the rules apply again at the next cycle. Another queue's rules
// go on meanwhile.
func TestHoldStopsEveryDeletion(t *testing.T) {
	t.Parallel()
	e := setup(t)
	rules := map[string]any{"retentionEnabled": true, "retentionSeconds": 60, "completedRetentionSeconds": 30,
		"maxWaitTimeSeconds": 120, "retentionTier": "1w"}
	e.configure("held", rules)
	e.configure("free", rules)
	for _, q := range []string{"held", "free"} {
		e.pushSegment(q, "p", 3)
		e.consume(q, "p", "g", 2) // one of three unread
	}
	hold, err := holds.New(e.eng.Pool(), e.eng.Clock(), nil).Place(e.ctx, "held", "legal hold #7", "tester")
	if err != nil || !hold.Active || hold.Queue != "held" || hold.PlacedBy != "tester" {
		t.Fatalf("place hold: %+v, %v", hold, err)
	}
	var lossAt *time.Time
	if err := e.pool.QueryRow(e.ctx, `SELECT min(loss_at) FROM lethe.group_loss WHERE queue_name = 'held'`).Scan(&lossAt); err != nil || lossAt != nil {
		t.Fatalf("time to loss of the held queue: %v, %v; want none", lossAt, err)
	}
	x, err := e.svc.Explain(e.ctx, "held")
	if err != nil || len(x.Bounds) == 0 || x.Bounds[0].Rule != "retentionHold" || x.Bounds[0].Deletes != "nothing" {
		t.Fatalf("explain of the held queue: %+v, %v; want the hold first, deleting nothing", x, err)
	}
	e.clock.Advance(10 * time.Minute)
	res := e.fullCycle()
	if got := len(e.segments("held", "p")); got != 1 || len(e.segments("free", "p")) != 0 {
		t.Fatalf("seconds rules under the hold: held keeps %d segments, free %d; want 1 and 0 (%+v)",
			got, len(e.segments("free", "p")), res)
	}
	if h := e.history("held"); len(h) != 0 {
		t.Fatalf("the held queue has history %+v, want none", h)
	}

	// The tier: ten days on, the 1w leaf drops; the held queue's segment
	// moves to the held area first, and the held month stays.
	e.clock.Advance(10 * tier.Day)
	e.fullCycle()
	if got := offsetsOf(e.consume("held", "p", "g", 1)); !equalInts(got, []int64{2}) {
		t.Fatalf("after the tier's drop the held queue's unread message is %v, want offset 2", got)
	}
	e.clock.Set(time.Date(2030, 3, 1, 0, 0, 0, 0, time.UTC))
	if res := e.fullCycle(); res.HeldDrop.Frames != 0 || len(e.segments("held", "p")) != 1 {
		t.Fatalf("the held month under the hold: dropped %+v, segments %v; want kept", res.HeldDrop, e.segments("held", "p"))
	}

	// Deleting the queue, or a dead letter of it, is refused.
	if _, err := e.eng.DeleteQueue(e.ctx, "held"); !errors.Is(err, engine.ErrConflict) || len(e.segments("held", "p")) != 1 {
		t.Fatalf("delete the held queue: %v, segments %v; want a conflict and nothing gone", err, e.segments("held", "p"))
	}
	e.mustExec(`INSERT INTO lethe.dead_letters (partition_id, group_name, msg_offset, txn_id, payload, error, retry_count, created_at, failed_at)
		VALUES ($1, 'g', 0, 'x', '{}', 'test', 0, $2, $2)`, e.partitionID("held", "p"), t0)
	var dl int64
	if err := e.pool.QueryRow(e.ctx, `SELECT id FROM lethe.dead_letters`).Scan(&dl); err != nil {
		t.Fatal(err)
	}
	if err := e.eng.DeleteDeadLetter(e.ctx, dl); !errors.Is(err, engine.ErrConflict) {
		t.Fatalf("delete a dead letter of the held queue: %v, want a conflict", err)
	}
	purging := e.newService(e.pool, func(c *Config) { c.DLQRetentionDays = 1 })
	if res, err := purging.RunCycle(e.ctx); err != nil || res.DeadLettersPurged != 0 {
		t.Fatalf("DLQ_RETENTION_DAYS under the hold: purged %d, %v; want the dead letter kept", res.DeadLettersPurged, err)
	}
	if _, err := holds.New(e.eng.Pool(), e.eng.Clock(), nil).Release(e.ctx, hold.ID+100, "tester"); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("release an unknown hold: %v, want not found", err)
	}

	// Released: the next cycle deletes what the rules say.
	released, err := holds.New(e.eng.Pool(), e.eng.Clock(), nil).Release(e.ctx, hold.ID, "tester2")
	if err != nil || released.Active || released.ReleasedBy == nil || *released.ReleasedBy != "tester2" {
		t.Fatalf("release: %+v, %v", released, err)
	}
	if _, err := holds.New(e.eng.Pool(), e.eng.Clock(), nil).Release(e.ctx, hold.ID, "tester2"); !errors.Is(err, engine.ErrConflict) {
		t.Fatalf("release twice: %v, want a conflict", err)
	}
	e.fullCycle()
	if got := len(e.segments("held", "p")); got != 0 {
		t.Fatalf("after the release the held queue keeps %d segments, want 0", got)
	}
	if res, err := purging.RunCycle(e.ctx); err != nil || res.DeadLettersPurged != 1 {
		t.Fatalf("DLQ_RETENTION_DAYS after the release: purged %d, %v; want the dead letter gone", res.DeadLettersPurged, err)
	}
	if _, err := e.eng.DeleteQueue(e.ctx, "held"); err != nil {
		t.Fatalf("delete the released queue: %v", err)
	}
}

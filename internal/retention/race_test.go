package retention

import (
	"context"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/engine"
)

// waitForLockWait polls until some session of the test's database waits
// for a lock.
func (e *env) waitForLockWait() {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for e.count(`
		SELECT count(*) FROM pg_catalog.pg_locks l JOIN pg_catalog.pg_stat_activity a ON a.pid = l.pid
		 WHERE NOT l.granted AND a.datname = current_database()`) == 0 {
		if time.Now().After(deadline) {
			e.t.Fatal("no session started waiting for a lock")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestASeekWaitsForASweepStepAndIsClampedToWhatIsLeft(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.configure("q", map[string]any{"retentionEnabled": true, "completedRetentionSeconds": 60})
	e.pushSegment("q", "p", 3) // 0..2 at t0
	e.clock.Advance(time.Minute)
	e.pushSegment("q", "p", 3) // 3..5
	e.consume("q", "p", "g", 6)
	e.clock.Advance(time.Hour)
	pid := e.partitionID("q", "p")

	// A sweep step, held open inside a transaction: it has locked the
	// partition, read g's cursor and deleted what g consumed.
	tx, err := e.pool.Begin(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(e.ctx) //nolint:errcheck
	cutoff := e.clock.Now().Add(-time.Minute)
	if _, err := tx.Exec(e.ctx, `SELECT * FROM lethe.sweep_step($1, NULL, $2, NULL, 100, $3)`, pid, cutoff, e.clock.Now()); err != nil {
		t.Fatal(err)
	}

	type seekResult struct {
		res *api.SeekResult
		err error
	}
	done := make(chan seekResult, 1)
	go func() {
		back := t0
		res, err := e.eng.Seek(context.Background(), engine.SeekRequest{Group: "g", Queue: "q", Partition: "p", Timestamp: &back})
		done <- seekResult{res, err}
	}()
	e.waitForLockWait()
	select {
	case r := <-done:
		t.Fatalf("the seek finished (%+v, %v) while the sweep step held the partition", r.res, r.err)
	default:
	}
	if err := tx.Commit(e.ctx); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.res.CommittedOffset == nil || *r.res.CommittedOffset != 5 || r.res.ClampedPartitions != 1 {
		t.Fatalf("seek = %+v; want the cursor at the low watermark (committed 5), clamped on 1 partition", r.res)
	}
}

func TestASweepStepWaitsForASeekAndSeesItsCursor(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.configure("q", map[string]any{"retentionEnabled": true, "completedRetentionSeconds": 60})
	e.pushSegment("q", "p", 3)
	e.consume("q", "p", "g", 3)
	e.clock.Advance(time.Hour)
	pid := e.partitionID("q", "p")

	// A seek back to the start, held open after taking its lock and
	// moving the cursor.
	tx, err := e.pool.Begin(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(e.ctx) //nolint:errcheck
	if _, err := tx.Exec(e.ctx, `SELECT 1 FROM lethe.partitions WHERE id = $1 FOR KEY SHARE`, pid); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(e.ctx, `UPDATE lethe.cursors SET committed = -1 WHERE partition_id = $1`, pid); err != nil {
		t.Fatal(err)
	}
	done := make(chan CycleResult, 1)
	go func() {
		res, err := e.svc.RunCycle(context.Background())
		if err != nil {
			t.Errorf("RunCycle: %v", err)
		}
		done <- res
	}()
	e.waitForLockWait()
	if err := tx.Commit(e.ctx); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if res.Total().Segments != 0 || len(e.segments("q", "p")) != 1 {
		t.Fatalf("the sweep deleted %+v after g sought back; want nothing deleted", res.Total())
	}
}

func TestASeekCannotDeadlockWithATransactionThatAcksThenPushes(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.pushSegment("q", "p", 3)
	e.consume("q", "p", "g", 1)
	pid := e.partitionID("q", "p")

	// A transaction's acks hold g's cursor; its push will then lock the
	// partition.
	tx, err := e.pool.Begin(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(e.ctx) //nolint:errcheck
	if _, err := tx.Exec(e.ctx, `SELECT 1 FROM lethe.cursors WHERE partition_id = $1 AND group_name = 'g' FOR UPDATE`, pid); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := e.eng.Seek(context.Background(), engine.SeekRequest{Group: "g", Queue: "q", ToEnd: true})
		done <- err
	}()
	e.waitForLockWait()
	if _, err := tx.Exec(e.ctx, `SET LOCAL lock_timeout = '5s'`); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(e.ctx, `SELECT 1 FROM lethe.partitions WHERE id = $1 FOR UPDATE`, pid); err != nil {
		t.Fatalf("the transaction could not lock the partition while the seek waited: %v", err)
	}
	if err := tx.Commit(e.ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("seek: %v", err)
	}
}

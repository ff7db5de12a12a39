package engine_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/engine"
)

// Pop, ack and lease extension update a cursor in place: no index covers a
// column they change, so with the table's fillfactor the updates are
// heap-only (HOT). While lease_id was indexed, none were: 0 HOT of 342k
// updates under the soak's load.
func TestCoreCursorUpdatesAreHOT(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	const partitions, cycles = 4, 150
	for p := range partitions {
		payloads := make([]string, cycles/partitions+1)
		for i := range payloads {
			payloads[i] = fmt.Sprintf(`{"p":%d,"i":%d}`, p, i)
		}
		e.push("hot", fmt.Sprintf("p%d", p), payloads...)
	}
	before := e.cursorUpdates()
	updates := int64(0)
	for i := range cycles {
		resp := e.popN(engine.PopRequest{Queue: "hot", Group: "g"}, 1)
		updates++ // the claim
		if i%10 == 0 {
			if _, err := e.eng.ExtendLease(e.ctx, resp.LeaseID, 60); err != nil {
				t.Fatalf("extend: %v", err)
			}
			updates++
		}
		e.ackMsg(resp.Messages[0], api.AckCompleted)
		updates++ // the settle
	}
	after := e.waitCursorUpdates(before.upd + updates)
	upd, hot := after.upd-before.upd, after.hot-before.hot
	ratio := float64(hot) / float64(upd)
	t.Logf("lethe.cursors: %d updates, %d heap-only (%.1f%%)", upd, hot, 100*ratio)
	if ratio < 0.9 {
		t.Errorf("%d of %d cursor updates were heap-only (%.1f%%), want at least 90%%", hot, upd, 100*ratio)
	}
	var indexes []string
	rows, err := e.pool.Query(e.ctx, `SELECT indexname FROM pg_indexes WHERE schemaname = 'lethe' AND tablename = 'cursors'`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		indexes = append(indexes, n)
	}
	if rows.Err() != nil || len(indexes) != 1 || indexes[0] != "cursors_pkey" {
		t.Errorf("indexes on lethe.cursors: %v (%v), want only cursors_pkey", indexes, rows.Err())
	}
}

type tupleUpdates struct{ upd, hot int64 }

func (e *coreEnv) cursorUpdates() tupleUpdates {
	e.t.Helper()
	var u tupleUpdates
	// A fresh snapshot of the statistics on every read.
	if err := e.pool.QueryRow(e.ctx, `
		SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables, pg_stat_clear_snapshot()
		 WHERE schemaname = 'lethe' AND relname = 'cursors'`).Scan(&u.upd, &u.hot); err != nil {
		e.t.Fatalf("read cursor statistics: %v", err)
	}
	return u
}

// waitCursorUpdates polls the statistics until they count at least want
// updates: each backend reports its counts when it goes idle, at most once
// a second (pg_stat_force_next_flush only reaches the calling backend, and
// the updates ran on the engine's connections).
func (e *coreEnv) waitCursorUpdates(want int64) tupleUpdates {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		u := e.cursorUpdates()
		if u.upd >= want {
			return u
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("cursor statistics count %d updates after 30 s, want at least %d", u.upd, want)
		}
		time.Sleep(50 * time.Millisecond) // polling a condition with a deadline
	}
}

// An ack batch writes each (partition, group) cursor once, however many of
// its messages it acks: the rules run in Go on the locked row, and one
// UPDATE stores the outcome.
func TestCoreAckBatchUpdatesEachCursorOnce(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	for _, p := range []string{"a", "b"} {
		payloads := make([]string, 40)
		for i := range payloads {
			payloads[i] = fmt.Sprintf(`%d`, i)
		}
		e.push("batch", p, payloads...)
	}
	resp := e.popN(engine.PopRequest{Queue: "batch", Group: "g", Batch: 80, MaxPartitions: 2}, 80)
	before := e.waitCursorUpdates(2) // the two claims
	acks := make([]api.AckRequest, len(resp.Messages))
	for i, m := range resp.Messages {
		acks[i] = api.AckRequest{TransactionID: m.TransactionID, PartitionID: m.PartitionID, LeaseID: m.LeaseID,
			Status: api.AckCompleted, ConsumerGroup: "g"}
	}
	for _, r := range e.ack(acks...) {
		if !r.Success || !r.LeaseReleased {
			t.Fatalf("ack %+v, want success releasing the lease", r)
		}
	}
	after := e.waitCursorUpdates(before.upd + 2)
	if n := after.upd - before.upd; n != 2 {
		t.Errorf("acking 80 messages on 2 partitions updated cursors %d times, want 2", n)
	}
}

package engine

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/clock"
	"github.com/lethe-mq/lethe/internal/frame"
	"github.com/lethe-mq/lethe/internal/pgtest"
	"github.com/lethe-mq/lethe/internal/schema"
	"github.com/lethe-mq/lethe/internal/store"
)

// A commit group's appends travel as one pipelined batch that commits or
// rolls back whole: when one partition of the group is gone, the others are
// written once each (not kept from the failed batch and written again, which
// would answer them as duplicates) and only the gone one fails. Not
// parallel: TestCoreCloseWaitsForEveryGoroutine counts goroutines.
func TestCommitGroupFailsAlone(t *testing.T) {
	ctx := context.Background()
	pool := migratedPool(t)
	var mu sync.Mutex
	var commits []int // what Hooks.CommitGroup observed
	e := New(pool, Config{Clock: clock.NewFake(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Hooks:  Hooks{CommitGroup: func(n int) { mu.Lock(); commits = append(commits, n); mu.Unlock() }}})
	defer e.Close()
	var items []api.PushItem
	for _, p := range []string{"a", "b", "c"} {
		items = append(items, api.PushItem{Queue: "group", Partition: p, Payload: json.RawMessage(`0`)})
	}
	if _, err := e.Push(ctx, items, ""); err != nil {
		t.Fatal(err)
	}
	pids := map[string]uuid.UUID{}
	rows, err := pool.Query(ctx, `SELECT p.name, p.id FROM lethe.partitions p JOIN lethe.queues q ON q.id = p.queue_id WHERE q.name = 'group'`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name string
		var id uuid.UUID
		if err := rows.Scan(&name, &id); err != nil {
			t.Fatal(err)
		}
		pids[name] = id
	}
	if rows.Err() != nil || len(pids) != 3 {
		t.Fatalf("partitions %v, %v", pids, rows.Err())
	}

	req := func() *appendReq {
		r := &appendReq{}
		for range 2 {
			txn := uuid.NewString()
			r.add(store.TxnHash(txn), false, frame.Message{CreatedAt: e.clock.Now(), TxnID: txn, Payload: json.RawMessage(`1`)})
		}
		return r
	}
	gone := uuid.New()
	group := []*flushJob{
		{pid: pids["a"], reqs: []*appendReq{req()}},
		{pid: gone, reqs: []*appendReq{req()}},
		{pid: pids["b"], reqs: []*appendReq{req(), req()}},
		{pid: pids["c"], reqs: []*appendReq{req()}},
	}
	mu.Lock()
	commits = nil
	mu.Unlock()
	e.writeGroup(ctx, group)
	mu.Lock()
	// The group's transaction failed: what committed is each surviving
	// segment on its own, never the group of four.
	if !slices.Equal(commits, []int{1, 1, 1}) {
		t.Errorf("commits observed %v, want [1 1 1]", commits)
	}
	mu.Unlock()

	for _, j := range group {
		if j.pid == gone {
			if !errors.Is(j.err, store.ErrPartitionGone) {
				t.Errorf("the gone partition's append answered %v, want ErrPartitionGone", j.err)
			}
			continue
		}
		if j.err != nil {
			t.Errorf("partition %s failed with the gone one: %v", j.pid, j.err)
			continue
		}
		next := int64(1) // each partition holds its first message at 0
		for _, r := range j.reqs {
			for _, res := range r.results {
				if res.Duplicate || res.Offset != next {
					t.Errorf("partition %s: result %+v, want a new message at %d", j.pid, res, next)
				}
				next++
			}
		}
	}
	for name, want := range map[string]int64{"a": 3, "b": 5, "c": 3} {
		var frames int64
		if err := pool.QueryRow(ctx, `SELECT coalesce(sum(frame_count), 0) FROM lethe.segments WHERE partition_id = $1`, pids[name]).Scan(&frames); err != nil {
			t.Fatal(err)
		}
		if frames != want {
			t.Errorf("partition %s holds %d frames, want %d (each written once)", name, frames, want)
		}
	}
}

// At most `writeSlots` transactions write segments at once: with every slot
// held, pushes to idle partitions (which would write in their own
// goroutines) wait; once a slot frees, every push is written, the waiting
// segments together. Not parallel:
// TestCoreCloseWaitsForEveryGoroutine counts goroutines.
func TestAppendWritesOnlyInAFreeSlot(t *testing.T) {
	ctx := context.Background()
	pool := migratedPool(t)
	e := New(pool, Config{Clock: clock.NewFake(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	defer e.Close()
	for range writeSlots {
		e.appender.slots <- struct{}{}
	}
	answered := make(chan error, 2)
	for _, p := range []string{"a", "b"} {
		go func() {
			_, err := e.Push(ctx, []api.PushItem{{Queue: "slots", Partition: p, Payload: json.RawMessage(`1`)}}, "")
			answered <- err
		}()
	}
	// Both pushes are in the appender once their partitions are flushing.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		e.appender.mu.Lock()
		n := len(e.appender.inflight)
		e.appender.mu.Unlock()
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of 2 pushes reached the appender", n)
		}
	}
	select {
	case err := <-answered:
		t.Fatalf("a push was answered (error %v) while every slot was held", err)
	case <-time.After(200 * time.Millisecond):
	}
	<-e.appender.slots
	for range 2 {
		if err := <-answered; err != nil {
			t.Fatal(err)
		}
	}
	var frames int64
	if err := pool.QueryRow(ctx, `
		SELECT coalesce(sum(s.frame_count), 0) FROM lethe.segments s
		  JOIN lethe.partitions p ON p.id = s.partition_id JOIN lethe.queues q ON q.id = p.queue_id
		 WHERE q.name = 'slots'`).Scan(&frames); err != nil {
		t.Fatal(err)
	}
	if frames != 2 {
		t.Errorf("%d frames stored, want 2", frames)
	}
	for range writeSlots - 1 {
		<-e.appender.slots
	}
}

// migratedPool is a pool on a new database with lethe's schema, closed
// when the test ends.
func migratedPool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if _, err := schema.Migrate(context.Background(), pool); err != nil {
		t.Fatal(err)
	}
	return pool
}

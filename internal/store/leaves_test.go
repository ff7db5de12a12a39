package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/internal/store"
)

// setTier gives a queue's partitions a retention tier (the engine's job).
func (e *env) setTier(queue, tier string) {
	e.t.Helper()
	if _, err := e.pool.Exec(e.ctx, `UPDATE lethe.queues SET retention_tier = $2 WHERE name = $1`, queue, tier); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) leafNames(tier string) []string {
	e.t.Helper()
	leaves, err := store.Leaves(e.ctx, e.pool)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, l := range leaves {
		if l.Tier == tier {
			out = append(out, l.Name)
		}
	}
	return out
}

// An append whose leaf does not exist (the clock jumped past the leaves
// made ahead) creates it; EnsureLeaves makes the next ones ahead of need.
func TestAppendCreatesAMissingLeafAndLeavesAhead(t *testing.T) {
	t.Parallel()
	e := setup(t)
	pid := e.partition("q", "p")
	e.setTier("q", "1w")
	e.appendAt(e.pool, pid, t0, "a")
	e.appendAt(e.pool, pid, t0.Add(40*24*time.Hour), "b")
	if got := strings.Join(e.leafNames("1w"), " "); got != "segments_1w_p20300102 segments_1w_p20300211" {
		t.Fatalf("1w leaves %s; want the two days appended to", got)
	}
	if err := store.EnsureLeaves(e.ctx, e.pool, []string{"1w", "7w", "txns"}, t0.Add(40*24*time.Hour), 2); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(e.leafNames("7w"), " "); got != "segments_7w_p20300211 segments_7w_p20300218 segments_7w_p20300225" {
		t.Fatalf("7w leaves ahead %s; want this week and the next two", got)
	}
	if got := strings.Join(e.read(pid, 0, 10, store.Everything()), " "); got != "0:a 1:b" {
		t.Fatalf("read across leaves: %s", got)
	}
}

// appended_at never goes backwards within a partition: a replica whose
// clock is behind appends into the leaf of the latest append.
func TestAppendedAtNeverGoesBackwards(t *testing.T) {
	t.Parallel()
	e := setup(t)
	pid := e.partition("q", "p")
	e.setTier("q", "1w")
	e.appendAt(e.pool, pid, t0.Add(48*time.Hour), "late")
	e.appendAt(e.pool, pid, t0, "behind")
	var n int64
	if err := e.pool.QueryRow(e.ctx, `SELECT count(*) FROM lethe.segments_1w_p20300104`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("the leaf of the latest append holds %d segments (%v), want both", n, err)
	}
}

// Detaching a leaf never locks its parent against appends: while DETACH
// ... CONCURRENTLY waits for a reader that started before it, appends and
// reads of the same tier go on.
func TestDetachDoesNotBlockAppends(t *testing.T) {
	t.Parallel()
	e := setup(t)
	pid := e.partition("q", "p")
	e.setTier("q", "1w")
	e.appendAt(e.pool, pid, t0, "old")
	e.appendAt(e.pool, pid, t0.Add(24*time.Hour), "new")

	reader, err := e.pool.Begin(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := reader.Exec(e.ctx, `SELECT count(*) FROM lethe.segments`); err != nil {
		t.Fatal(err)
	}
	detached := make(chan error, 1)
	go func() { detached <- store.DetachLeaf(context.Background(), e.pool, "segments_1w_p20300102") }()
	e.waitForLockWait(`%DETACH PARTITION%`)

	done := make(chan struct{})
	go func() {
		defer close(done)
		e.appendAt(e.pool, pid, t0.Add(24*time.Hour), "during")
		if got := strings.Join(e.read(pid, 1, 10, store.Everything()), " "); got != "1:new 2:during" {
			t.Errorf("read while detaching: %s", got)
		}
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("an append waited for the detach")
	}
	_ = reader.Rollback(e.ctx)
	if err := <-detached; err != nil {
		t.Fatalf("detach: %v", err)
	}
	bytes, err := store.DropLeaf(e.ctx, e.pool, "segments_1w_p20300102")
	if err != nil {
		t.Fatal(err)
	}
	if bytes < 8192 {
		t.Fatalf("the dropped leaf held %d bytes by pg_total_relation_size; want at least a page", bytes)
	}
	if got := strings.Join(e.read(pid, 0, 10, store.Everything()), " "); got != "1:new 2:during" {
		t.Fatalf("after the drop: %s", got)
	}
}

// waitForLockWait waits until a statement like pattern waits for a lock
// or for older transactions (a deadline, not a sleep).
func (e *env) waitForLockWait(pattern string) {
	e.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		var n int
		if err := e.pool.QueryRow(e.ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE query LIKE $1 AND wait_event_type = 'Lock' AND datname = current_database()`, pattern).Scan(&n); err != nil {
			e.t.Fatal(err)
		}
		if n > 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	e.t.Fatalf("no statement like %s started waiting", pattern)
}

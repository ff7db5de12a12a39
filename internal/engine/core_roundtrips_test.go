package engine_test

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/engine"
	"github.com/lethe-mq/lethe/internal/store"
)

// roundTrips counts what the engine sends to PostgreSQL: a statement or a
// pipeline of statements is one round trip. With only set, it counts just
// the statements only accepts (sent alone or in a pipeline).
type roundTrips struct {
	n    atomic.Int64
	only func(sql string) bool
}

func (r *roundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	// The notifier's NOTIFY to other replicas is sent from its own
	// goroutine, debounced, whenever it likes: not a request's.
	if r.only != nil && r.only(d.SQL) || r.only == nil && !strings.HasPrefix(d.SQL, "SELECT pg_notify(") {
		r.n.Add(1)
	}
	return ctx
}
func (r *roundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (r *roundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	if r.only == nil {
		r.n.Add(1)
	}
	return ctx
}
func (r *roundTrips) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	if r.only != nil && r.only(d.SQL) {
		r.n.Add(1)
	}
}
func (r *roundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// A pop of one waiting message and its ack cost few round trips: the
// consumer transactions send BEGIN with their first statement and the
// cursor's update with COMMIT, and the cursor's lock reads the messages.
// Before that, the pop made six (candidates, BEGIN, lock, read, update,
// COMMIT), then four, and the ack four.
func TestCorePopAndAckRoundTrips(t *testing.T) {
	t.Parallel()
	rt := &roundTrips{}
	e := newCoreEnvPool(t, engine.Config{}, func(c *pgxpool.Config) { c.ConnConfig.Tracer = rt })
	req := engine.PopRequest{Queue: "orders", Group: "g", Batch: 1}
	// Warm up: the statements are prepared and the catalog cached.
	e.push("orders", "p", `{"n":1}`, `{"n":2}`)
	e.ackMsg(e.popN(req, 1).Messages[0], api.AckCompleted)

	before := rt.n.Load()
	m := e.popN(req, 1).Messages[0]
	pop := rt.n.Load() - before
	before = rt.n.Load()
	e.ackMsg(m, api.AckCompleted)
	ack := rt.n.Load() - before
	if pop > 3 || ack > 2 {
		t.Errorf("a pop of one message made %d round trips (want at most 3: candidates, BEGIN+lock+read, update+COMMIT), its ack %d (want at most 2: BEGIN+lock, update+COMMIT)", pop, ack)
	}
	if n := e.count(`SELECT committed FROM lethe.cursors WHERE group_name = 'g'`); n != 1 {
		t.Fatalf("after acking both messages the cursor is at %d, want 1: the deferred update was lost", n)
	}
}

// A long poll woken by a push, or by a lease released on a partition with
// more work, claims that partition without listing the queue's partitions
// first: the wake-up names it (the listing was a round trip of its own).
// Named a partition where the group has no cursor yet, the pop still
// delivers: it finds nothing to lock, lists, and makes the cursor.
func TestCoreWokenPopSkipsTheListing(t *testing.T) {
	t.Parallel()
	listings := &roundTrips{only: func(sql string) bool {
		return strings.Contains(sql, "LEFT JOIN lethe.cursors c ON c.partition_id = p.id")
	}}
	e := newCoreEnvPool(t, engine.Config{}, func(c *pgxpool.Config) { c.ConnConfig.Tracer = listings })
	if err := store.EnsureLeaves(e.ctx, e.pool, []string{"forever", store.TierTxns}, coreT0, 1); err != nil {
		t.Fatal(err)
	}
	req := engine.PopRequest{Queue: "hint", Group: "g"}
	e.push("hint", "p1", `"a"`)
	e.push("hint", "p2", `"b"`)
	for range 2 { // the group's cursors on both
		e.ackMsg(e.popN(req, 1).Messages[0], api.AckCompleted)
	}
	type result struct {
		resp *api.PopResponse
		err  error
	}
	// longPoll starts a long poll, waits until it sleeps, runs wake, and
	// answers the messages it got (acked) and the listings made meanwhile.
	longPoll := func(wake func()) ([]string, int64) {
		t.Helper()
		done := make(chan result, 1)
		go func() {
			r := req
			r.Wait, r.Timeout = true, 10*time.Second
			resp, err := e.eng.Pop(e.ctx, r)
			done <- result{resp, err}
		}()
		e.sig.Waiting.WaitFor(t, func(q string) bool { return q == "hint" })
		before := listings.n.Load()
		wake()
		r := <-done
		if r.err != nil {
			t.Fatalf("long poll: %v", r.err)
		}
		listed := listings.n.Load() - before
		for _, m := range r.resp.Messages {
			e.ackMsg(m, api.AckCompleted)
		}
		return corePayloads(r.resp), listed
	}

	got, listed := longPoll(func() { e.push("hint", "p2", `"c"`) })
	if !slices.Equal(got, []string{`"c"`}) || listed != 0 {
		t.Errorf("a long poll woken by a push got %v after %d listings, want [\"c\"] after none", got, listed)
	}
	e.push("hint", "p1", `"d"`, `"e"`)
	held := e.popN(req, 1) // "d": p1 is leased
	got, listed = longPoll(func() { e.ackMsg(held.Messages[0], api.AckCompleted) })
	if !slices.Equal(got, []string{`"e"`}) || listed != 0 {
		t.Errorf("a long poll woken by a release got %v after %d listings, want [\"e\"] after none", got, listed)
	}
	got, listed = longPoll(func() { e.push("hint", "p3", `"f"`) })
	if !slices.Equal(got, []string{`"f"`}) || listed == 0 {
		t.Errorf("a long poll woken by a push to a partition without the group's cursor got %v after %d listings, want [\"f\"] after some", got, listed)
	}
	// Named a partition another consumer holds, the long poll finds
	// nothing, waits again, and takes the message at the release.
	e.push("hint", "p1", `"g"`)
	held = e.popN(req, 1)
	got, _ = longPoll(func() {
		e.push("hint", "p1", `"h"`)
		e.sig.Waiting.WaitFor(t, func(q string) bool { return q == "hint" }) // back to waiting
		e.ackMsg(held.Messages[0], api.AckCompleted)
	})
	if !slices.Equal(got, []string{`"h"`}) {
		t.Errorf("a long poll woken for a held partition got %v at its release, want [\"h\"]", got)
	}
}

package engine_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lethe-mq/lethe/api"
	"github.com/lethe-mq/lethe/internal/engine"
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
// cursor's update with COMMIT. Before that, the pop made six (candidates,
// BEGIN, lock, read, update, COMMIT) and the ack four.
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
	if pop > 4 || ack > 2 {
		t.Errorf("a pop of one message made %d round trips (want at most 4: candidates, BEGIN+lock, read, update+COMMIT), its ack %d (want at most 2: BEGIN+lock, update+COMMIT)", pop, ack)
	}
	if n := e.count(`SELECT committed FROM lethe.cursors WHERE group_name = 'g'`); n != 1 {
		t.Fatalf("after acking both messages the cursor is at %d, want 1: the deferred update was lost", n)
	}
}

package retention

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/clock"
	"github.com/lethe-mq/lethe/internal/engine"
	"github.com/lethe-mq/lethe/internal/inspect"
	"github.com/lethe-mq/lethe/internal/pgtest"
	"github.com/lethe-mq/lethe/internal/queueopts"
	"github.com/lethe-mq/lethe/internal/schema"
	"github.com/lethe-mq/lethe/internal/testkit"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// t0 is where every test's fake clock starts.
var t0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// env is a migrated database with an engine and a retention Service on
// one fake clock; nothing runs in the background.
type env struct {
	t     *testing.T
	ctx   context.Context
	dsn   string
	pool  *pgxpool.Pool
	eng   *engine.Engine
	clock *clock.Fake
	svc   *Service
	logs  *syncBuffer
}

func setup(t *testing.T, mods ...func(*Config)) *env {
	t.Helper()
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	pool := newPool(t, dsn)
	if _, err := schema.Migrate(ctx, pool); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	clk := clock.NewFake(t0)
	eng := engine.New(pool, engine.Config{Clock: clk, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	t.Cleanup(eng.Close)
	e := &env{t: t, ctx: ctx, dsn: dsn, pool: pool, eng: eng, clock: clk, logs: &syncBuffer{}}
	e.svc = e.newService(pool, mods...)
	return e
}

func newPool(t *testing.T, dsn string) *pgxpool.Pool {
	t.Helper()
	pcfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	pcfg.MaxConns = 8
	pool, err := pgxpool.NewWithConfig(context.Background(), pcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// newService builds another Service on the env's clock, logging into
// e.logs at debug level. Its duty cycle records rests instead of taking
// them, so tests never sleep; Stop runs at the test's end.
func (e *env) newService(pool *pgxpool.Pool, mods ...func(*Config)) *Service {
	cfg := Config{
		Clock:  e.clock,
		Logger: slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Forget: e.eng.Forget,
	}
	cfg.TestSignals.Rest = func(worked, rest time.Duration) {}
	for _, m := range mods {
		m(&cfg)
	}
	svc := New(pool, cfg)
	e.t.Cleanup(svc.Stop)
	return svc
}

func (e *env) cycle() CycleResult {
	e.t.Helper()
	res, err := e.svc.RunCycle(e.ctx)
	if err != nil {
		e.t.Fatalf("RunCycle: %v", err)
	}
	if res.Skipped {
		e.t.Fatal("RunCycle skipped: the lock was held")
	}
	return res
}

func (e *env) configure(queue string, opts map[string]any) {
	e.t.Helper()
	raw, _ := json.Marshal(opts)
	if _, err := queueopts.New(e.eng).Configure(e.ctx, api.ConfigureRequest{Queue: queue, Options: raw}); err != nil {
		e.t.Fatalf("configure %s: %v", queue, err)
	}
}

// pushSegment pushes n messages to queue/partition in one request: one
// segment, stamped with the clock's now. Each carries a producer's
// transaction id, so the sidecar holds its hash (an id lethe mints is not
// there: TestLateAckOfAMintedIDOutlivesTheSidecar).
func (e *env) pushSegment(queue, partition string, n int) []api.PushResult {
	e.t.Helper()
	items := make([]api.PushItem, n)
	for i := range items {
		items[i] = api.PushItem{Queue: queue, Partition: partition, Payload: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i)),
			TransactionID: uuid.NewString()}
	}
	res, err := e.eng.Push(e.ctx, items, "")
	if err != nil {
		e.t.Fatalf("push: %v", err)
	}
	return res
}

func (e *env) pop(queue, partition, group string, batch int) *api.PopResponse {
	e.t.Helper()
	resp, err := e.eng.Pop(e.ctx, engine.PopRequest{Queue: queue, Partition: partition, Group: group, Batch: batch})
	if err != nil {
		e.t.Fatalf("pop %s/%s as %q: %v", queue, partition, group, err)
	}
	return resp
}

func (e *env) ack(msgs []api.Message, group string) []api.AckResult {
	e.t.Helper()
	reqs := make([]api.AckRequest, len(msgs))
	for i, m := range msgs {
		reqs[i] = api.AckRequest{TransactionID: m.TransactionID, PartitionID: m.PartitionID, LeaseID: m.LeaseID,
			Status: api.AckCompleted, ConsumerGroup: group}
	}
	res, err := e.eng.Ack(e.ctx, reqs, group)
	if err != nil {
		e.t.Fatalf("ack: %v", err)
	}
	return res
}

// consume pops batch messages as group and acks them all.
func (e *env) consume(queue, partition, group string, batch int) []api.Message {
	e.t.Helper()
	resp := e.pop(queue, partition, group, batch)
	if len(resp.Messages) != batch {
		e.t.Fatalf("pop %s as %q: got %d messages, want %d", queue, group, len(resp.Messages), batch)
	}
	for _, r := range e.ack(resp.Messages, group) {
		if !r.Success {
			e.t.Fatalf("ack: %s", r.Error)
		}
	}
	return resp.Messages
}

func (e *env) partitionID(queue, partition string) uuid.UUID {
	e.t.Helper()
	var id uuid.UUID
	err := e.pool.QueryRow(e.ctx, `
		SELECT p.id FROM lethe.partitions p JOIN lethe.queues q ON q.id = p.queue_id
		 WHERE q.name = $1 AND p.name = $2`, queue, partition).Scan(&id)
	if err != nil {
		e.t.Fatalf("partition %s/%s: %v", queue, partition, err)
	}
	return id
}

// segments lists the base offsets of the partition's segments in order.
func (e *env) segments(queue, partition string) []int64 {
	e.t.Helper()
	rows, err := e.pool.Query(e.ctx, `SELECT base_offset FROM lethe.segments WHERE partition_id = $1 ORDER BY base_offset`,
		e.partitionID(queue, partition))
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	out := []int64{}
	for rows.Next() {
		var b int64
		if err := rows.Scan(&b); err != nil {
			e.t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

func (e *env) lowWatermark(queue, partition string) int64 {
	e.t.Helper()
	var low int64
	if err := e.pool.QueryRow(e.ctx, `SELECT low_watermark FROM lethe.partitions WHERE id = $1`,
		e.partitionID(queue, partition)).Scan(&low); err != nil {
		e.t.Fatal(err)
	}
	return low
}

func (e *env) count(sql string, args ...any) int64 {
	e.t.Helper()
	var n int64
	if err := e.pool.QueryRow(e.ctx, sql, args...).Scan(&n); err != nil {
		e.t.Fatalf("%s: %v", sql, err)
	}
	return n
}

func (e *env) history(queue string) []HistoryEntry {
	e.t.Helper()
	h, err := e.svc.reads.RetentionHistory(e.ctx, HistoryQuery{Queue: queue, From: t0.Add(-time.Hour), To: e.clock.Now().Add(time.Hour), Limit: 1000})
	if err != nil {
		e.t.Fatal(err)
	}
	return h
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// syncBuffer is a log sink several goroutines may write.
type syncBuffer = testkit.SyncBuffer

func enginePop(queue, group, mode string) engine.PopRequest {
	return engine.PopRequest{Queue: queue, Group: group, Batch: 1, SubscriptionMode: mode}
}

// isLoss says whether l is group's loss of messages, offsets from to to in
// one partition, leased of them leased.
func isLoss(l GroupLoss, group string, messages, from, to, leased int64) bool {
	return l.Group == group && l.Messages == messages && l.Leased == leased && l.Partitions == 1 &&
		l.FromOffset != nil && *l.FromOffset == from && l.ToOffset != nil && *l.ToOffset == to &&
		len(l.Ranges) == 1 && l.Ranges[0].Messages == messages
}

// The audit rows as the read model answers them.
type (
	HistoryEntry = inspect.HistoryEntry
	HistoryQuery = inspect.HistoryQuery
	GroupLoss    = inspect.GroupLoss
)

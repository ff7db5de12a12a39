package engine_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/clock"
	"github.com/lethe-mq/lethe/internal/engine"
	"github.com/lethe-mq/lethe/internal/inspect"
	"github.com/lethe-mq/lethe/internal/pgtest"
	"github.com/lethe-mq/lethe/internal/pguuid"
	"github.com/lethe-mq/lethe/internal/queueopts"
	"github.com/lethe-mq/lethe/internal/schema"
	"github.com/lethe-mq/lethe/internal/store"
)

// coreT0 is where every test's fake clock starts.
var coreT0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// coreEnv is an engine on its own fresh database with a fake clock.
type coreEnv struct {
	t     *testing.T
	ctx   context.Context
	eng   *engine.Engine
	pool  *pgxpool.Pool
	clock *clock.Fake
	// sig are the engine's test signals, armed.
	sig engine.TestSignals
}

// newCoreEnv builds the engine directly (not through testserver) so tests can
// set engine.Config knobs the replica does not expose.
func newCoreEnv(t *testing.T, cfg engine.Config) *coreEnv {
	t.Helper()
	return newCoreEnvPool(t, cfg, nil)
}

// newCoreEnvPool is newCoreEnv with the pool's configuration adjusted by
// poolCfg (a tracer, say) when not nil.
func newCoreEnvPool(t *testing.T, cfg engine.Config, poolCfg func(*pgxpool.Config)) *coreEnv {
	t.Helper()
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	pcfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	pcfg.MaxConns = 10
	pcfg.AfterConnect = pguuid.AfterConnect // as the app's pool
	if poolCfg != nil {
		poolCfg(pcfg)
	}
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if _, err := schema.Migrate(ctx, pool); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	clk := clock.NewFake(coreT0)
	cfg.Clock = clk
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	cfg.TestSignals.Init()
	eng := engine.New(pool, cfg)
	t.Cleanup(eng.Close)
	return &coreEnv{t: t, ctx: ctx, eng: eng, pool: pool, clock: clk, sig: cfg.TestSignals}
}

// push appends one message per payload (raw JSON) to queue/partition.
func (e *coreEnv) push(queue, partition string, payloads ...string) []api.PushResult {
	e.t.Helper()
	items := make([]api.PushItem, len(payloads))
	for i, p := range payloads {
		items[i] = api.PushItem{Queue: queue, Partition: partition, Payload: json.RawMessage(p)}
	}
	return e.pushItems(items...)
}

func (e *coreEnv) pushItems(items ...api.PushItem) []api.PushResult {
	e.t.Helper()
	res, err := e.eng.Push(e.ctx, items, "")
	if err != nil {
		e.t.Fatalf("push: %v", err)
	}
	if len(res) != len(items) {
		e.t.Fatalf("push answered %d results for %d items", len(res), len(items))
	}
	return res
}

func (e *coreEnv) pop(req engine.PopRequest) *api.PopResponse {
	e.t.Helper()
	resp, err := e.eng.Pop(e.ctx, req)
	if err != nil {
		e.t.Fatalf("pop %+v: %v", req, err)
	}
	return resp
}

// popN pops and requires exactly n messages.
func (e *coreEnv) popN(req engine.PopRequest, n int) *api.PopResponse {
	e.t.Helper()
	resp := e.pop(req)
	if len(resp.Messages) != n {
		e.t.Fatalf("pop %+v: got %d messages %v, want %d", req, len(resp.Messages), corePayloads(resp), n)
	}
	return resp
}

func (e *coreEnv) ack(acks ...api.AckRequest) []api.AckResult {
	e.t.Helper()
	res, err := e.eng.Ack(e.ctx, acks, "")
	if err != nil {
		e.t.Fatalf("ack: %v", err)
	}
	return res
}

// ackMsg acks one delivered message with status and requires success.
func (e *coreEnv) ackMsg(m api.Message, status string) api.AckResult {
	e.t.Helper()
	res := e.ack(api.AckRequest{TransactionID: m.TransactionID, PartitionID: m.PartitionID, LeaseID: m.LeaseID,
		Status: status, ConsumerGroup: m.ConsumerGroup, Error: "test says " + status})
	if !res[0].Success {
		e.t.Fatalf("ack %s of %s: %+v", status, m.TransactionID, res[0])
	}
	return res[0]
}

func (e *coreEnv) configure(queue, options string) {
	e.t.Helper()
	if _, err := queueopts.New(e.eng).Configure(e.ctx, api.ConfigureRequest{Queue: queue, Options: json.RawMessage(options)}); err != nil {
		e.t.Fatalf("configure %s %s: %v", queue, options, err)
	}
}

// count runs a SELECT count(*)-like query.
func (e *coreEnv) count(sql string, args ...any) int64 {
	e.t.Helper()
	var n int64
	if err := e.pool.QueryRow(e.ctx, sql, args...).Scan(&n); err != nil {
		e.t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// rowCounts is the number of rows of every core table, and what the store
// holds, to prove that a rejected request wrote nothing.
func (e *coreEnv) rowCounts() map[string]int64 {
	e.t.Helper()
	out := map[string]int64{}
	for _, table := range []string{"queues", "partitions", "subscriptions", "cursors", "dead_letters"} {
		out[table] = e.count("SELECT count(*) FROM lethe." + table)
	}
	st, hashes := e.stored()
	out["stored messages"], out["stored segments"], out["stored hashes"] = st.Messages, st.Segments, hashes
	return out
}

// stored is what the store holds in all.
func (e *coreEnv) stored() (store.Stats, int64) {
	e.t.Helper()
	st, hashes, err := store.Totals(e.ctx, e.pool)
	if err != nil {
		e.t.Fatal(err)
	}
	return st, hashes
}

func corePayloads(resp *api.PopResponse) []string {
	var out []string
	for _, m := range resp.Messages {
		out = append(out, string(m.Data))
	}
	return out
}

func coreSameCounts(t *testing.T, before, after map[string]int64) {
	t.Helper()
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s: %d, want %d (nothing should have been written)", k, after[k], v)
		}
	}
}

// readerOf is the read models over eng, as the HTTP server builds them
// (the engine's own tests of what a browse or DLQ listing shows).
func readerOf(eng *engine.Engine) *inspect.Reader {
	h := eng.Hooks()
	return inspect.New(inspect.Config{Pool: eng.Pool(), Clock: eng.Clock(), Keys: eng.Keys(),
		Unreadable: h.Unreadable, PartitionFailed: h.PartitionFailed})
}

// deadLetterPage unpacks a page of dead letters.
func deadLetterPage(p *api.DeadLetterList, err error) ([]api.DeadLetter, int64, error) {
	if err != nil {
		return nil, 0, err
	}
	return p.Messages, p.Total, nil
}

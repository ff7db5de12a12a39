package store_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lethe-mq/lethe/internal/frame"
	"github.com/lethe-mq/lethe/internal/pgtest"
	"github.com/lethe-mq/lethe/internal/schema"
	"github.com/lethe-mq/lethe/internal/store"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// t0 is when every test's messages begin.
var t0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

type env struct {
	t    *testing.T
	ctx  context.Context
	pool *pgxpool.Pool
}

// setup gives a test its own migrated database.
func setup(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if _, err := schema.Migrate(ctx, pool); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return &env{t: t, ctx: ctx, pool: pool}
}

// partition creates queue/partition rows (the catalog's job, not the
// store's) and returns the partition id.
func (e *env) partition(queue, name string) uuid.UUID {
	e.t.Helper()
	pid := uuid.New()
	_, err := e.pool.Exec(e.ctx, `
		WITH q AS (INSERT INTO lethe.queues (name, created_at, updated_at) VALUES ($1, $3, $3)
		           ON CONFLICT (name) DO UPDATE SET updated_at = EXCLUDED.updated_at RETURNING id)
		INSERT INTO lethe.partitions (id, queue_id, name, created_at) SELECT $2, q.id, $4, $3 FROM q`,
		queue, pid, t0, name)
	if err != nil {
		e.t.Fatalf("create partition %s/%s: %v", queue, name, err)
	}
	return pid
}

// encode is the frame of a message with transaction id txn and the
// transaction id as JSON payload, created at at.
func encode(txn string, at time.Time) []byte {
	payload, _ := json.Marshal(txn)
	return frame.Encode(frame.Message{CreatedAt: at, TxnID: txn, Payload: payload})
}

// appendAt appends one batch of messages, one per transaction id, all
// created at at.
func (e *env) appendAt(q store.Querier, pid uuid.UUID, at time.Time, txns ...string) []store.Appended {
	e.t.Helper()
	b := store.NewBatch(len(txns), 0)
	for _, txn := range txns {
		b.Add(store.TxnHash(txn), encode(txn, at), at)
	}
	out, err := store.Append(e.ctx, q, pid, b, at)
	if err != nil {
		e.t.Fatalf("append %v: %v", txns, err)
	}
	if len(out) != len(txns) {
		e.t.Fatalf("append of %d answered %d outcomes", len(txns), len(out))
	}
	return out
}

// read reads pid from from and returns "offset:txn" per frame ("offset:!"
// for an unreadable one).
func (e *env) read(pid uuid.UUID, from int64, limit int, visibleBefore time.Time) []string {
	e.t.Helper()
	frames, err := store.Read(e.ctx, e.pool, pid, from, limit, 0, visibleBefore)
	if err != nil {
		e.t.Fatalf("read %s from %d: %v", pid, from, err)
	}
	return describe(frames)
}

// readNamed is read with "offset:m" for a frame named by MintedID.
func (e *env) readNamed(pid uuid.UUID, from int64, limit int) []string {
	e.t.Helper()
	out := e.read(pid, from, limit, store.Everything())
	for i, s := range out {
		off, txn, _ := strings.Cut(s, ":")
		if at, ok := store.MintedOffset(pid, txn); ok && itoa(at) == off {
			out[i] = off + ":m"
		}
	}
	return out
}

func describe(frames []store.Frame) []string {
	out := []string{}
	for _, f := range frames {
		if f.Err != nil {
			out = append(out, itoa(f.Offset)+":!")
			continue
		}
		out = append(out, itoa(f.Offset)+":"+f.TxnID)
	}
	return out
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

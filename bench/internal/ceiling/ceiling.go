// Package ceiling measures what the same PostgreSQL does with the same
// bytes and no queue in between: segment rows of 100 frames written from 8
// connections, one INSERT per message from 64, segment rows read back with
// a cursor commit, single INSERTs at a fixed load for latency, and segment
// rows deleted in batches of 1,000. Every lethe figure is a ratio of one of
// these, measured in the same run.
package ceiling

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lethe-mq/lethe/bench/internal/payload"
	"github.com/lethe-mq/lethe/bench/internal/plan"
	"github.com/lethe-mq/lethe/bench/internal/profiling"
	"github.com/lethe-mq/lethe/bench/internal/result"
	"github.com/lethe-mq/lethe/internal/frame"
)

// framesPerRow is the segment size of the ingest ceiling.
const framesPerRow = 100

// Env is what the raw scenarios run against.
type Env struct {
	DSN    string // a database of the shared server, just for these tables
	Out    io.Writer
	Plan   plan.Plan
	Sink   result.Sink
	Settle func(ctx context.Context)
	// Profile records each measured window's statements under -profile;
	// nil without.
	Profile *profiling.Scope
}

const schemaSQL = `
CREATE SCHEMA IF NOT EXISTS bench_raw;
CREATE TABLE IF NOT EXISTS bench_raw.segments (
    partition_id int    NOT NULL,
    base_offset  bigint NOT NULL,
    last_offset  bigint NOT NULL,
    frame_count  int    NOT NULL,
    first_at     timestamptz NOT NULL,
    last_at      timestamptz NOT NULL,
    byte_size    int    NOT NULL,
    frames       bytea  NOT NULL,
    PRIMARY KEY (partition_id, base_offset));
CREATE TABLE IF NOT EXISTS bench_raw.sweep (LIKE bench_raw.segments INCLUDING ALL);
CREATE TABLE IF NOT EXISTS bench_raw.messages (
    id           bigserial PRIMARY KEY,
    partition_id int    NOT NULL,
    created_at   timestamptz NOT NULL,
    payload      bytea  NOT NULL);
CREATE TABLE IF NOT EXISTS bench_raw.cursors (
    id        int PRIMARY KEY,
    committed bigint NOT NULL);
`

// lz4SQL gives the raw segment tables the compression lethe's segments
// have, so neither side is spared work the other does.
const lz4SQL = `
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_settings
               WHERE name = 'default_toast_compression' AND 'lz4' = ANY(enumvals)) THEN
        ALTER TABLE bench_raw.segments ALTER COLUMN frames SET COMPRESSION lz4;
        ALTER TABLE bench_raw.sweep ALTER COLUMN frames SET COMPRESSION lz4;
    END IF;
END $$;`

// Prepare creates the tables, empty.
func Prepare(ctx context.Context, env *Env) error {
	pool, err := pgxpool.New(ctx, env.DSN)
	if err != nil {
		return err
	}
	defer pool.Close()
	for _, sql := range []string{schemaSQL, lz4SQL,
		`TRUNCATE bench_raw.segments, bench_raw.sweep, bench_raw.messages, bench_raw.cursors`} {
		if _, err := pool.Exec(ctx, sql); err != nil {
			return fmt.Errorf("ceiling tables: %w", err)
		}
	}
	return nil
}

func newPool(ctx context.Context, env *Env, conns int) (*pgxpool.Pool, error) {
	return newPoolWith(ctx, env, conns, nil)
}

// newPoolWith is newPool with run-time parameters set on every connection.
func newPoolWith(ctx context.Context, env *Env, conns int, params map[string]string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(env.DSN)
	if err != nil {
		return nil, err
	}
	cfg.MaxConns, cfg.MinConns = int32(conns), int32(conns)
	for k, v := range params {
		cfg.ConnConfig.RuntimeParams[k] = v
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("ceiling: connect: %w", err)
	}
	return pool, nil
}

// segmentBlobs makes n distinct segment bodies of perRow frames each, framed
// the way lethe frames messages (transaction id of a UUID's length).
func segmentBlobs(seed uint64, n, perRow, size int) [][]byte {
	pool := payload.Pool(seed, n*perRow, size)
	rng := rand.New(rand.NewPCG(seed, 99))
	now := time.Now()
	out := make([][]byte, n)
	for i := range out {
		var blob []byte
		for j := range perRow {
			txn := fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", rng.Uint32(), rng.Uint32()&0xffff, rng.Uint32()&0xffff, rng.Uint32()&0xffff, rng.Uint64()&0xffffffffffff)
			blob = frame.Append(blob, frame.Message{CreatedAt: now, TxnID: txn, Payload: pool[i*perRow+j]})
		}
		out[i] = blob
	}
	return out
}

// window is the meter hook that records the statements of the measured
// window of the result named key under -profile (nil without).
func (e *Env) window(ctx context.Context, key string) func(time.Duration) func() {
	if e.Profile == nil {
		return nil
	}
	return func(expected time.Duration) func() { return e.Profile.Window(ctx, key, expected) }
}

func (e *Env) settle(ctx context.Context) {
	if e.Settle != nil {
		e.Settle(ctx)
	}
}

package ceiling

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lethe-mq/lethe/bench/internal/meter"
	"github.com/lethe-mq/lethe/bench/internal/result"
)

// The layout of lethe's held-move backlog (lethebench.HeldMove) and the
// byte budget of one of its settle steps (store.SettleBudgetBytes).
const (
	moveRowFrames  = 100
	movePartitions = 8
	moveBudget     = 8 << 20
)

// moveSQL moves the first $2 rows of partition $1 from one leaf-shaped
// table to the other in one statement, as lethe's settle step moves
// segments to the held area, and counts what it moved.
const moveSQL = `
WITH m AS (
    DELETE FROM bench_raw.move_src s
     WHERE s.partition_id = $1
       AND s.base_offset IN (SELECT base_offset FROM bench_raw.move_src
                              WHERE partition_id = $1 ORDER BY base_offset LIMIT $2)
    RETURNING s.*),
i AS (INSERT INTO bench_raw.move_dst SELECT * FROM m RETURNING frame_count, byte_size)
SELECT count(*)::int, coalesce(sum(frame_count), 0)::bigint, coalesce(sum(byte_size), 0)::bigint FROM i`

// MoveSegments fills a table shaped like a segment leaf with lethe's
// held-move backlog (Plan.HeldMoveFrames frames in rows of 100 over 8
// partitions) and moves every row into a second such table, partition by
// partition, in batches of 8 MiB, one autocommitted statement each, while
// the tier load INSERTs: the least moving those frames to the held area
// can cost on this disk (msg/s, MiB/s, insert p99 during against idle).
func MoveSegments(ctx context.Context, env *Env, size int) error {
	pool, err := newPool(ctx, env, tierLoadSenders+1)
	if err != nil {
		return err
	}
	defer pool.Close()
	frames := env.Plan.HeldMoveFrames
	for _, t := range []string{"move_src", "move_dst"} {
		if err := createLeaf(ctx, pool, t); err != nil {
			return err
		}
	}
	fill := leafFill{table: "move_src", frames: frames, perRow: moveRowFrames, partitions: movePartitions, size: size}
	pids, err := fillLeaf(ctx, env, pool, fill)
	if err != nil {
		return err
	}
	var rowBytes float64
	if err := pool.QueryRow(ctx, `SELECT avg(byte_size)::float8 FROM bench_raw.move_src`).Scan(&rowBytes); err != nil {
		return fmt.Errorf("ceiling move: row size: %w", err)
	}
	batch := max(1, int((moveBudget+rowBytes-1)/rowBytes)) // rows until 8 MiB is reached, as a settle step takes them
	env.settle(ctx)
	load, err := startInsertLoad(ctx, pool, size)
	if err != nil {
		return err
	}
	meter.Sleep(ctx, env.Plan.SweepBaseline)
	began := time.Now()
	m, err := moveAll(ctx, env, pool, pids, batch, began.Add(env.Plan.SweepLimit))
	ended := time.Now()
	load.finish()
	if err != nil {
		return err
	}
	addMoveResult(env, size, m, batch, ended.Sub(began), load.rec.Started(load.began, began),
		load.rec.Overlapping(began, ended), load.note())
	_, err = pool.Exec(ctx, `DROP TABLE bench_raw.move_src, bench_raw.move_dst, bench_raw.tier_load`)
	return err
}

// moved is what a raw move did.
type moved struct {
	frames, bytes int64
	statements    int
	limited       bool
}

// moveAll runs the move statements until every partition is empty or the
// time limit passes, from one connection.
func moveAll(ctx context.Context, env *Env, pool *pgxpool.Pool, pids []uuid.UUID, batch int, limit time.Time) (moved, error) {
	var m moved
	prog := meter.StartProgress(env.Out, "ceiling segment move", func() string {
		return fmt.Sprintf("%s frames moved", meter.Group(m.frames))
	})
	defer prog.Stop()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return m, err
	}
	defer conn.Release()
	for _, pid := range pids {
		for rows := batch; rows == batch; {
			if time.Now().After(limit) {
				m.limited = true
				return m, nil
			}
			var f, b int64
			if err := conn.QueryRow(ctx, moveSQL, pid, batch).Scan(&rows, &f, &b); err != nil {
				return m, fmt.Errorf("ceiling move: %w", err)
			}
			m.frames, m.bytes, m.statements = m.frames+f, m.bytes+b, m.statements+1
		}
	}
	return m, nil
}

func addMoveResult(env *Env, size int, m moved, batch int, took time.Duration, idle, during meter.Summary, load string) {
	secs := took.Seconds()
	r := result.Result{
		Key: fmt.Sprintf("ceiling/segment-move/%d", size), System: result.Ceiling, Scenario: "segment-move",
		Label: fmt.Sprintf("raw move of %s frames between segment-leaf tables: DELETE ... RETURNING into INSERT, 8 MiB a statement",
			meter.Group(m.frames)),
		Payload: size, Batch: batch, Clients: 1, Partitions: movePartitions, Unit: "msg/s",
		Count: m.frames, Seconds: secs, Latency: &during, Baseline: &idle,
	}
	if secs > 0 {
		r.Value = float64(m.frames) / secs
	}
	r.Notes = fmt.Sprintf("%s in %d statements of %d rows, %.1f MiB/s; insert p99 %.1f ms during vs %.1f ms idle; %s",
		mib(m.bytes), m.statements, batch, float64(m.bytes)/(1<<20)/max(secs, 1e-9), during.P99, idle.P99, load)
	if m.limited {
		r.Notes += "; time limit reached"
	}
	env.Sink.Add(r)
}

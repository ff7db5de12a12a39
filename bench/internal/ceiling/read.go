package ceiling

import (
	"context"
	"fmt"

	"github.com/lethe-mq/lethe/bench/internal/meter"
	"github.com/lethe-mq/lethe/bench/internal/payload"
	"github.com/lethe-mq/lethe/bench/internal/result"
	"github.com/lethe-mq/lethe/internal/frame"
)

const readConns = 8

// ReadSegments is the consuming side's ceiling: each of 8 connections reads
// the rows IngestSegments wrote for its partition in order, decodes every
// frame, and commits its position in a cursor row (one autocommitted UPDATE
// per row of 100 frames, as a durable ack would).
func ReadSegments(ctx context.Context, env *Env, size int) error {
	pool, err := newPool(ctx, env, readConns)
	if err != nil {
		return err
	}
	defer pool.Close()
	rows := make([]int64, readConns)
	for w := range readConns {
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM bench_raw.segments WHERE partition_id = $1`, w).Scan(&rows[w]); err != nil {
			return fmt.Errorf("ceiling read: %w", err)
		}
		if rows[w] == 0 {
			return fmt.Errorf("ceiling read: no segment rows for partition %d (segment ingest must run first)", w)
		}
		if _, err := pool.Exec(ctx, `INSERT INTO bench_raw.cursors VALUES ($1, -1) ON CONFLICT (id) DO UPDATE SET committed = -1`, w); err != nil {
			return fmt.Errorf("ceiling read: %w", err)
		}
	}
	next := make([]int64, readConns)
	env.settle(ctx)
	out := meter.Run(ctx, meter.Spec{
		Name: "ceiling segment read " + payload.Label(size), Unit: "msg", Workers: readConns,
		Warmup: env.Plan.Warmup, Duration: env.Plan.Duration, Out: env.Out,
		Window: env.window(ctx, fmt.Sprintf("ceiling/segment-read/%d", size)),
	}, func(ctx context.Context, w int) (int, error) {
		base := (next[w] % rows[w]) * framesPerRow // wraps around when every row was read
		var blob []byte
		if err := pool.QueryRow(ctx, `SELECT frames FROM bench_raw.segments WHERE partition_id = $1 AND base_offset = $2`,
			w, base).Scan(&blob); err != nil {
			return 0, err
		}
		n := 0
		if err := frame.Walk(blob, func(int, frame.Message) bool { n++; return true }); err != nil {
			return 0, err
		}
		if _, err := pool.Exec(ctx, `UPDATE bench_raw.cursors SET committed = $2 WHERE id = $1`, w, base+int64(n)-1); err != nil {
			return 0, err
		}
		next[w]++
		return n, nil
	})
	r := result.Result{
		Key: fmt.Sprintf("ceiling/segment-read/%d", size), System: result.Ceiling, Scenario: "segment-read",
		Label:   "raw segment read: rows of 100 frames decoded, cursor UPDATE per row, 8 connections",
		Payload: size, Batch: framesPerRow, Clients: readConns, Partitions: readConns, Unit: "msg/s",
	}.FromOutcome(out)
	if total := rows[0] * readConns; out.Items > total*framesPerRow {
		r.Notes = "rows were read more than once (from the page cache)"
	}
	env.Sink.Add(r)
	return nil
}

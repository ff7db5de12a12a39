package ceiling

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lethe-mq/lethe/bench/internal/meter"
	"github.com/lethe-mq/lethe/bench/internal/payload"
	"github.com/lethe-mq/lethe/bench/internal/result"
)

const (
	deleteBatch      = 1000
	deletePartitions = 8
)

// DeleteSegments fills a table with the sweep's backlog shape (the same
// frame count, frames per row and partitions, by COPY), then deletes it
// from one connection in batches of 1,000 rows, oldest first, one
// transaction per batch: the least a retention sweep of that backlog can
// cost.
func DeleteSegments(ctx context.Context, env *Env, size int) error {
	pool, err := newPool(ctx, env, deletePartitions)
	if err != nil {
		return err
	}
	defer pool.Close()
	frames, perRow := env.Plan.SweepBacklog, env.Plan.SweepSegmentFrames
	if err := fillSweep(ctx, env, pool, size, frames, perRow); err != nil {
		return err
	}
	env.settle(ctx)
	var deleted atomic.Int64
	prog := meter.StartProgress(env.Out, "ceiling segment delete "+payload.Label(size), func() string {
		return fmt.Sprintf("%s of %s frames deleted", meter.Group(deleted.Load()), meter.Group(int64(frames)))
	})
	endWindow := env.Profile.Window(ctx, fmt.Sprintf("ceiling/segment-delete/%d", size), 0)
	defer endWindow() // on an early return; ending twice is harmless
	began := time.Now()
	limit := began.Add(env.Plan.SweepLimit)
	conn, err := pool.Acquire(ctx)
	if err != nil {
		prog.Stop()
		return err
	}
	defer conn.Release()
	batches := 0
	for p := 0; p < deletePartitions && time.Now().Before(limit); p++ {
		for time.Now().Before(limit) {
			var rows int
			var n int64
			err := conn.QueryRow(ctx, `
				WITH gone AS (
					DELETE FROM bench_raw.sweep
					 WHERE partition_id = $1
					   AND base_offset IN (SELECT base_offset FROM bench_raw.sweep
					                        WHERE partition_id = $1 ORDER BY base_offset LIMIT $2)
					RETURNING frame_count)
				SELECT count(*), coalesce(sum(frame_count), 0) FROM gone`, p, deleteBatch).Scan(&rows, &n)
			if err != nil {
				prog.Stop()
				return fmt.Errorf("ceiling delete: %w", err)
			}
			batches++
			deleted.Add(n)
			if rows < deleteBatch {
				break
			}
		}
	}
	elapsed := time.Since(began)
	prog.Stop()
	endWindow()
	r := result.Result{
		Key: fmt.Sprintf("ceiling/segment-delete/%d", size), System: result.Ceiling, Scenario: "segment-delete",
		Label:   fmt.Sprintf("raw segment delete: %d-frame rows in batches of %d rows, one connection", perRow, deleteBatch),
		Payload: size, Batch: deleteBatch, Clients: 1, Partitions: deletePartitions, Unit: "frames/s",
		Count: deleted.Load(), Seconds: elapsed.Seconds(), Value: float64(deleted.Load()) / elapsed.Seconds(),
		Notes: fmt.Sprintf("%s frames in %d statements, no concurrent load", meter.Group(deleted.Load()), batches),
	}
	if deleted.Load() < int64(frames) {
		r.Notes += "; time limit reached"
	}
	env.Sink.Add(r)
	return nil
}

// fillSweep writes frames in rows of perRow over 8 partitions by COPY, in
// parallel, reusing a few distinct row bodies.
func fillSweep(ctx context.Context, env *Env, pool *pgxpool.Pool, size, frames, perRow int) error {
	blobs := segmentBlobs(uint64(size)+3, 8, perRow, size)
	var written atomic.Int64
	prog := meter.StartProgress(env.Out, "ceiling sweep backlog "+payload.Label(size), func() string {
		return fmt.Sprintf("%s of %s frames written", meter.Group(written.Load()), meter.Group(int64(frames)))
	})
	defer prog.Stop()
	at := time.Now().Add(-2 * time.Hour)
	var wg sync.WaitGroup
	errs := make(chan error, deletePartitions)
	for p := range deletePartitions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			share := frames / deletePartitions
			if p < frames%deletePartitions {
				share++
			}
			for off := 0; off < share; {
				var rows [][]any
				for len(rows) < max(1, 8000/perRow) && off < share {
					n := min(perRow, share-off)
					blob := blobs[(off/perRow)%len(blobs)]
					if n < perRow {
						blob = firstFrames(blob, n)
					}
					rows = append(rows, []any{p, int64(off), int64(off + n - 1), n, at, at, len(blob), blob})
					off += n
				}
				if _, err := pool.CopyFrom(ctx, pgx.Identifier{"bench_raw", "sweep"},
					[]string{"partition_id", "base_offset", "last_offset", "frame_count", "first_at", "last_at", "byte_size", "frames"},
					pgx.CopyFromRows(rows)); err != nil {
					errs <- fmt.Errorf("ceiling sweep backlog: %w", err)
					return
				}
				for _, r := range rows {
					written.Add(int64(r[3].(int)))
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// firstFrames is the prefix of blob holding its first n frames.
func firstFrames(blob []byte, n int) []byte {
	end := 0
	for range n {
		end += 4 + int(binary.BigEndian.Uint32(blob[end:]))
	}
	return blob[:end]
}

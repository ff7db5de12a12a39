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
// cost. The first half of the partitions is deleted with nothing else
// running (the sweep's ceiling); the second beside the load lethe's sweep
// scenario pushes under (rows of 10 frames at the same rate), whose INSERT
// latency is measured before and during that half: what deleting at full
// speed does to a writer's latency in PostgreSQL alone.
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
	alone, err := deleteHalf(ctx, env, pool, size, 0, "")
	if err != nil {
		return err
	}
	alone.Key = fmt.Sprintf("ceiling/segment-delete/%d", size)
	alone.Label = fmt.Sprintf("raw segment delete: %d-frame rows in batches of %d rows, one connection", perRow, deleteBatch)
	alone.Notes += ", no concurrent load"
	env.Sink.Add(alone)

	load, err := startDeleteLoad(ctx, env, size)
	if err != nil {
		return err
	}
	defer load.stop()
	meter.Sleep(ctx, env.Plan.Warmup)
	load.phase.Store(loadBaseline)
	meter.Sleep(ctx, env.Plan.SweepBaseline)
	load.phase.Store(loadDuring)
	loaded, err := deleteHalf(ctx, env, pool, size, deletePartitions/2, " beside the load")
	load.stop()
	if err != nil {
		return err
	}
	base, during := load.baseline.Summary(), load.during.Summary()
	loaded.Key = fmt.Sprintf("ceiling/segment-delete-loaded/%d", size)
	loaded.Label = fmt.Sprintf("raw segment delete beside %d msg/s of INSERTs (rows of %d frames), latency of those INSERTs",
		env.Plan.SweepLoadRate, deleteLoadBatch)
	loaded.Baseline, loaded.Latency = &base, &during
	loaded.Errors = load.errs.Count()
	loaded.FirstError = load.errs.First()
	loaded.Notes += fmt.Sprintf("; INSERT p50/p99 %.1f/%.1f ms during the delete vs %.1f/%.1f ms without (%d and %d INSERTs)",
		during.P50, during.P99, base.P50, base.P99, during.Count, base.Count)
	env.Sink.Add(loaded)
	return nil
}

// deleteHalf deletes the rows of deletePartitions/2 partitions from first
// on and answers the rate.
func deleteHalf(ctx context.Context, env *Env, pool *pgxpool.Pool, size, first int, what string) (result.Result, error) {
	var deleted atomic.Int64
	prog := meter.StartProgress(env.Out, "ceiling segment delete"+what+" "+payload.Label(size), func() string {
		return fmt.Sprintf("%s frames deleted", meter.Group(deleted.Load()))
	})
	defer prog.Stop()
	key := fmt.Sprintf("ceiling/segment-delete/%d", size)
	if first > 0 {
		key = fmt.Sprintf("ceiling/segment-delete-loaded/%d", size)
	}
	endWindow := env.Profile.Window(ctx, key, 0)
	defer endWindow() // on an early return; ending twice is harmless
	began := time.Now()
	limit := began.Add(env.Plan.SweepLimit)
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return result.Result{}, err
	}
	defer conn.Release()
	batches, complete := 0, true
	for p := first; p < first+deletePartitions/2; p++ {
		for {
			if !time.Now().Before(limit) {
				complete = false
				break
			}
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
				return result.Result{}, fmt.Errorf("ceiling delete: %w", err)
			}
			batches++
			deleted.Add(n)
			if rows < deleteBatch {
				break
			}
		}
	}
	elapsed := time.Since(began)
	endWindow()
	r := result.Result{
		System: result.Ceiling, Scenario: "segment-delete",
		Payload: size, Batch: deleteBatch, Clients: 1, Partitions: deletePartitions / 2, Unit: "frames/s",
		Count: deleted.Load(), Seconds: elapsed.Seconds(), Value: float64(deleted.Load()) / elapsed.Seconds(),
		Notes: fmt.Sprintf("%s frames of %d partitions in %d statements", meter.Group(deleted.Load()), deletePartitions/2, batches),
	}
	if !complete {
		r.Notes += "; time limit reached"
	}
	return r, nil
}

// The load beside the second half of the delete: lethe's sweep scenario's
// push load (SweepLoadRate messages a second in rows of 10), as INSERTs.
const (
	deleteLoadBatch   = 10
	deleteLoadSenders = 32
)

// The phases of that load; an INSERT's latency counts in the phase it
// started in.
const (
	loadWarmup int32 = iota
	loadBaseline
	loadDuring
)

type deleteLoad struct {
	phase            atomic.Int32
	baseline, during meter.Recorder
	errs             meter.Errors
	stop             func()
}

func startDeleteLoad(ctx context.Context, env *Env, size int) (*deleteLoad, error) {
	pool, err := newPool(ctx, env, deleteLoadSenders)
	if err != nil {
		return nil, err
	}
	blobs := segmentBlobs(uint64(size)+5, 16, deleteLoadBatch, size)
	l := &deleteLoad{}
	loadCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	var seq atomic.Int64
	go func() {
		defer close(done)
		meter.Paced(loadCtx, env.Plan.SweepLoadRate/deleteLoadBatch, deleteLoadSenders, 24*time.Hour, func(ctx context.Context) {
			k := seq.Add(1)
			ph := l.phase.Load()
			at := time.Now()
			blob := blobs[k%int64(len(blobs))]
			_, err := pool.Exec(ctx, `INSERT INTO bench_raw.segments VALUES ($1, $2, $3, $4, $5, $5, $6, $7)`,
				200+k%8, k*deleteLoadBatch, k*deleteLoadBatch+deleteLoadBatch-1, deleteLoadBatch, at, len(blob), blob)
			if err != nil {
				if ctx.Err() == nil {
					l.errs.Note(err)
				}
				return
			}
			switch ph {
			case loadBaseline:
				l.baseline.Add(time.Since(at))
			case loadDuring:
				l.during.Add(time.Since(at))
			}
		})
	}()
	var once sync.Once
	l.stop = func() {
		once.Do(func() {
			cancel()
			<-done
			pool.Close()
		})
	}
	return l, nil
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

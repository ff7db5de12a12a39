// Package sweepbench measures the retention sweep against a raw baseline on
// the same database in the same run: a backlog of segments deleted through
// retention.Service.RunCycle, and an identical copy deleted by plain
// DELETEs of segment rows by primary key in batches. The bench suite and
// this package's env-gated test both call Run.
package sweepbench

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lethe-mq/lethe/internal/clock"
	"github.com/lethe-mq/lethe/internal/frame"
	"github.com/lethe-mq/lethe/internal/retention"
)

// Config sizes the backlog. Zero values take the defaults: 10,000 segments
// of 100 frames of 1 KiB (1,000,000 messages), batches of 1,000.
type Config struct {
	Segments         int
	FramesPerSegment int
	PayloadBytes     int
	BatchSize        int
	// Logf reports progress; nil is quiet.
	Logf func(format string, args ...any)
}

// Result is one measurement.
type Result struct {
	Frames     int64
	Segments   int
	StoredMB   float64       // lethe.segments with TOAST and indexes, both copies, after loading
	Load       time.Duration // writing both copies
	Sweep      time.Duration // RunCycle deleting one copy
	Baseline   time.Duration // batched DELETEs of the other
	SweepRate  float64       // frames per second
	BaseRate   float64       // frames per second
	Ratio      float64       // SweepRate / BaseRate
	SweepSteps int64         // segments deleted by the cycle (sanity)
}

func (r Result) String() string {
	return fmt.Sprintf("%d frames in %d segments (%.0f MB stored): sweep %.0f frames/s (%v), baseline %.0f frames/s (%v), ratio %.2f",
		r.Frames, r.Segments, r.StoredMB, r.SweepRate, r.Sweep.Round(time.Millisecond), r.BaseRate,
		r.Baseline.Round(time.Millisecond), r.Ratio)
}

// Run loads the backlog into pool's database (migrated, with no queues
// named sweep-bench or sweep-baseline), deletes one copy by a batched
// baseline and the other by a retention cycle, and reports both.
func Run(ctx context.Context, pool *pgxpool.Pool, cfg Config) (Result, error) {
	cfg.Segments = cmp.Or(cfg.Segments, 10_000)
	cfg.FramesPerSegment = cmp.Or(cfg.FramesPerSegment, 100)
	cfg.PayloadBytes = cmp.Or(cfg.PayloadBytes, 1024)
	cfg.BatchSize = cmp.Or(cfg.BatchSize, 1000)
	logf := cfg.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	res := Result{Segments: cfg.Segments, Frames: int64(cfg.Segments * cfg.FramesPerSegment)}
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

	start := time.Now()
	swept, err := createPartition(ctx, pool, "sweep-bench", true, at)
	if err != nil {
		return res, err
	}
	baseline, err := createPartition(ctx, pool, "sweep-baseline", false, at)
	if err != nil {
		return res, err
	}
	if err := load(ctx, pool, swept, cfg, at); err != nil {
		return res, err
	}
	// The baseline's copy is the same rows, copied inside the server.
	if _, err := pool.Exec(ctx, `
		INSERT INTO lethe.segments (partition_id, base_offset, last_offset, frame_count, first_at, last_at, byte_size, frames)
		SELECT $2, base_offset, last_offset, frame_count, first_at, last_at, byte_size, frames
		  FROM lethe.segments WHERE partition_id = $1`, swept, baseline); err != nil {
		return res, fmt.Errorf("copy the backlog: %w", err)
	}
	if _, err := pool.Exec(ctx, `UPDATE lethe.partitions SET next_offset = $1 WHERE id = ANY($2)`,
		res.Frames, []uuid.UUID{swept, baseline}); err != nil {
		return res, err
	}
	res.Load = time.Since(start)
	if err := pool.QueryRow(ctx, `SELECT pg_total_relation_size('lethe.segments') / 1e6`).Scan(&res.StoredMB); err != nil {
		return res, err
	}
	logf("loaded 2 x %d frames (%.0f MB) in %v", res.Frames, res.StoredMB, res.Load.Round(time.Millisecond))
	if err := settle(ctx, pool); err != nil {
		return res, err
	}

	start = time.Now()
	if err := deleteBatches(ctx, pool, baseline, cfg.BatchSize); err != nil {
		return res, err
	}
	res.Baseline = time.Since(start)
	logf("baseline: %v", res.Baseline.Round(time.Millisecond))
	if err := settle(ctx, pool); err != nil {
		return res, err
	}

	svc := retention.New(pool, retention.Config{
		Clock:     clock.NewFake(at.Add(time.Hour)),
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
		BatchSize: cfg.BatchSize,
	})
	start = time.Now()
	cycle, err := svc.RunCycle(ctx)
	res.Sweep = time.Since(start)
	if err != nil {
		return res, fmt.Errorf("sweep: %w", err)
	}
	res.SweepSteps = cycle.Retention.Segments
	if cycle.Retention.Frames != res.Frames {
		return res, fmt.Errorf("the cycle deleted %d frames, want %d", cycle.Retention.Frames, res.Frames)
	}
	logf("sweep: %v", res.Sweep.Round(time.Millisecond))
	res.SweepRate = float64(res.Frames) / res.Sweep.Seconds()
	res.BaseRate = float64(res.Frames) / res.Baseline.Seconds()
	res.Ratio = res.SweepRate / res.BaseRate
	return res, nil
}

// createPartition makes a queue (with a one-minute retention when swept)
// and its one partition.
func createPartition(ctx context.Context, pool *pgxpool.Pool, queue string, retained bool, at time.Time) (uuid.UUID, error) {
	var qid int64
	err := pool.QueryRow(ctx, `
		INSERT INTO lethe.queues (name, retention_enabled, retention_seconds, created_at, updated_at)
		VALUES ($1, $2, CASE WHEN $2 THEN 60 ELSE 0 END, $3, $3) RETURNING id`, queue, retained, at).Scan(&qid)
	if err != nil {
		return uuid.Nil, fmt.Errorf("create queue %s: %w", queue, err)
	}
	pid := uuid.New()
	if _, err := pool.Exec(ctx, `INSERT INTO lethe.partitions (id, queue_id, name, created_at, last_push_at)
		VALUES ($1, $2, 'Default', $3, $3)`, pid, qid, at); err != nil {
		return uuid.Nil, fmt.Errorf("create partition of %s: %w", queue, err)
	}
	return pid, nil
}

// load COPYs the backlog's segments: real frames with random-hex JSON
// payloads (about half compressible, as JSON text tends to be), cycling
// through a few distinct segment bodies.
func load(ctx context.Context, pool *pgxpool.Pool, pid uuid.UUID, cfg Config, at time.Time) error {
	const distinct = 16
	bodies := make([][]byte, distinct)
	for i := range bodies {
		var seg []byte
		for j := range cfg.FramesPerSegment {
			raw := make([]byte, (cfg.PayloadBytes-16)/2)
			_, _ = rand.Read(raw)
			payload := fmt.Appendf(nil, `{"n":%d,"d":"%s"}`, j, hex.EncodeToString(raw))
			seg = frame.Append(seg, frame.Message{CreatedAt: at, TxnID: uuid.NewString(), Payload: payload})
		}
		bodies[i] = seg
	}
	n := 0
	_, err := pool.CopyFrom(ctx, pgx.Identifier{"lethe", "segments"},
		[]string{"partition_id", "base_offset", "last_offset", "frame_count", "first_at", "last_at", "byte_size", "frames"},
		pgx.CopyFromFunc(func() ([]any, error) {
			if n == cfg.Segments {
				return nil, nil
			}
			base := int64(n * cfg.FramesPerSegment)
			body := bodies[n%distinct]
			n++
			return []any{pid, base, base + int64(cfg.FramesPerSegment) - 1, cfg.FramesPerSegment, at, at, len(body), body}, nil
		}))
	if err != nil {
		return fmt.Errorf("load the backlog: %w", err)
	}
	return nil
}

// settle gives both measurements the same start: statistics current and
// no dirty pages from the previous step.
func settle(ctx context.Context, pool *pgxpool.Pool) error {
	for _, sql := range []string{`VACUUM ANALYZE lethe.segments`, `CHECKPOINT`} {
		if _, err := pool.Exec(ctx, sql); err != nil {
			return fmt.Errorf("%s: %w", sql, err)
		}
	}
	return nil
}

// deleteBatches is the baseline: segment rows deleted by primary key,
// batchSize per statement, each statement its own transaction.
func deleteBatches(ctx context.Context, pool *pgxpool.Pool, pid uuid.UUID, batchSize int) error {
	for {
		tag, err := pool.Exec(ctx, `
			DELETE FROM lethe.segments
			 WHERE partition_id = $1 AND base_offset IN (
			       SELECT base_offset FROM lethe.segments WHERE partition_id = $1
			        ORDER BY base_offset LIMIT $2)`, pid, batchSize)
		if err != nil {
			return fmt.Errorf("baseline delete: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return nil
		}
	}
}

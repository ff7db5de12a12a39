package riverbench

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/lethe-mq/lethe/bench/internal/meter"
	"github.com/lethe-mq/lethe/bench/internal/payload"
	"github.com/lethe-mq/lethe/bench/internal/result"
)

// clean starts a client whose cleaner keeps completed jobs for a
// nanosecond, and measures how fast it deletes them.
func clean(ctx context.Context, env *Env, pool *pgxpool.Pool, log *slog.Logger, size int) error {
	var initial int64
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE state = 'completed'`).Scan(&initial); err != nil {
		return fmt.Errorf("river: count completed: %w", err)
	}
	var done atomic.Int64
	workers := river.NewWorkers()
	river.AddWorker(workers, &benchWorker{done: &done})
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
		Logger:                      log,
		Queues:                      map[string]river.QueueConfig{"idle": {MaxWorkers: 1}},
		Workers:                     workers,
		CompletedJobRetentionPeriod: time.Nanosecond,
	})
	if err != nil {
		return fmt.Errorf("river: cleaner client: %w", err)
	}
	if env.Settle != nil {
		env.Settle(ctx)
	}
	began := time.Now()
	if err := client.Start(ctx); err != nil {
		return fmt.Errorf("river: start cleaner: %w", err)
	}
	var left atomic.Int64
	left.Store(initial)
	prog := meter.StartProgress(env.Out, "river cleaner "+payload.Label(size), func() string {
		return fmt.Sprintf("%s of %s completed jobs left", meter.Group(left.Load()), meter.Group(initial))
	})
	var first, finished time.Time
	for time.Since(began) < env.Plan.PeerRetentionLimit && ctx.Err() == nil {
		var n int64
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE state = 'completed'`).Scan(&n); err != nil {
			prog.Stop()
			return fmt.Errorf("river: count completed: %w", err)
		}
		left.Store(n)
		if n < initial && first.IsZero() {
			first = time.Now()
		}
		if n == 0 {
			finished = time.Now()
			break
		}
		meter.Sleep(ctx, 200*time.Millisecond)
	}
	prog.Stop()
	stopCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = client.Stop(stopCtx)
	end := finished
	if end.IsZero() {
		end = time.Now()
	}
	deleted := initial - left.Load()
	r := result.Result{
		Key: fmt.Sprintf("river/retention/%d", size), System: result.River, Scenario: "retention",
		Label:   "job cleaner deleting completed jobs (retention 1 ns, batches of 10,000)",
		Payload: size, Unit: "jobs/s", Count: deleted, Seconds: end.Sub(began).Seconds(),
		Ceiling: fmt.Sprintf("ceiling/segment-delete/%d", size),
	}
	if r.Seconds > 0 {
		r.Value = float64(deleted) / r.Seconds
	}
	switch {
	case first.IsZero():
		r.Notes = "the cleaner deleted nothing within the limit"
	case finished.IsZero():
		r.Notes = fmt.Sprintf("time limit: %s of %s deleted; first delete %.1f s after start", meter.Group(deleted), meter.Group(initial), first.Sub(began).Seconds())
	default:
		r.Notes = fmt.Sprintf("%s jobs in %.1f s from client start (first delete after %.1f s: leader election)", meter.Group(deleted), r.Seconds, first.Sub(began).Seconds())
	}
	env.Sink.Add(r)
	return nil
}

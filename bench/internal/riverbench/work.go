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

// work starts a client with tuned workers and counts jobs worked until all
// are done or the drain limit passes.
func work(ctx context.Context, env *Env, pool *pgxpool.Pool, log *slog.Logger, size int, total int64) error {
	var done atomic.Int64
	workers := river.NewWorkers()
	river.AddWorker(workers, &benchWorker{done: &done})
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
		Logger:  log,
		Queues:  map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: maxWorkers, FetchCooldown: fetchCooldown, FetchPollInterval: fetchPollInterval}},
		Workers: workers,
		// The cleaner is measured on its own afterwards.
		CompletedJobRetentionPeriod: 24 * time.Hour,
	})
	if err != nil {
		return fmt.Errorf("river: worker client: %w", err)
	}
	if env.Settle != nil {
		env.Settle(ctx)
	}
	began := time.Now()
	if err := client.Start(ctx); err != nil {
		return fmt.Errorf("river: start workers: %w", err)
	}
	out := meter.Run(ctx, meter.Spec{
		Name: "river work " + payload.Label(size), Unit: "job", Workers: 1, Duration: env.Plan.DrainLimit,
		Total: total, Out: env.Out,
	}, func(ctx context.Context, _ int) (int, error) {
		before := done.Load()
		meter.Sleep(ctx, 10*time.Millisecond)
		return int(done.Load() - before), nil
	})
	stopCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := client.Stop(stopCtx); err != nil {
		return fmt.Errorf("river: stop workers: %w", err)
	}
	r := result.Result{
		Key: fmt.Sprintf("river/consume/%d", size), System: result.River, Scenario: "pop-ack",
		Label:   fmt.Sprintf("jobs worked to completion, %d workers, fetch cooldown %s, poll %s", maxWorkers, fetchCooldown, fetchPollInterval),
		Payload: size, Clients: maxWorkers, Unit: "msg/s", Ceiling: fmt.Sprintf("ceiling/segment-read/%d", size),
	}.FromOutcome(out)
	r.Notes = fmt.Sprintf("%s of %s jobs in %.1f s (client start included: %.1f s total)",
		meter.Group(out.Items), meter.Group(total), out.Elapsed.Seconds(), time.Since(began).Seconds())
	env.Sink.Add(r)
	return nil
}

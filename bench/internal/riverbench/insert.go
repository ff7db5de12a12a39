package riverbench

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/lethe-mq/lethe/bench/internal/meter"
	"github.com/lethe-mq/lethe/bench/internal/payload"
	"github.com/lethe-mq/lethe/bench/internal/result"
)

// insert measures one batch size, with a pool of one connection per
// inserting client.
func insert(ctx context.Context, env *Env, log *slog.Logger, payloads [][]byte, size, batch, clients int) error {
	cfg, err := pgxpool.ParseConfig(env.DSN)
	if err != nil {
		return err
	}
	cfg.MaxConns = int32(clients)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("river: connect: %w", err)
	}
	defer pool.Close()
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{Logger: log})
	if err != nil {
		return fmt.Errorf("river: client: %w", err)
	}
	if env.Settle != nil {
		env.Settle(ctx)
	}
	seq := make([]int, clients)
	out := meter.Run(ctx, meter.Spec{
		Name: fmt.Sprintf("river insert b%d c%d %s", batch, clients, payload.Label(size)), Unit: "job",
		Workers: clients, Warmup: env.Plan.Warmup, Duration: env.Plan.Duration, Latency: true, Out: env.Out,
	}, func(ctx context.Context, w int) (int, error) {
		k := seq[w]
		seq[w]++
		if batch == 1 {
			_, err := client.Insert(ctx, benchArgs{P: payloads[(k*clients+w)%len(payloads)]}, nil)
			if err != nil {
				return 0, err
			}
			return 1, nil
		}
		params := make([]river.InsertManyParams, batch)
		for i := range params {
			params[i] = river.InsertManyParams{Args: benchArgs{P: payloads[(k*batch+i+w*997)%len(payloads)]}}
		}
		if _, err := client.InsertMany(ctx, params); err != nil {
			return 0, err
		}
		return batch, nil
	})
	label := "Insert, one job per call"
	if batch > 1 {
		label = fmt.Sprintf("InsertMany, batches of %d", batch)
	}
	r := result.Result{
		Key: fmt.Sprintf("river/push/b%d/%d", batch, size), System: result.River, Scenario: "push",
		Label: fmt.Sprintf("%s, %d clients", label, clients), Payload: size, Batch: batch, Clients: clients,
		Unit: "msg/s", Ceiling: ceilingFor(batch, size),
	}.FromOutcome(out)
	lat := out.Latency
	r.Latency = &lat
	env.Sink.Add(r)
	return nil
}

func ceilingFor(batch, size int) string {
	if batch == 1 {
		return fmt.Sprintf("ceiling/insert/%d", size)
	}
	return fmt.Sprintf("ceiling/segment-ingest/%d", size)
}

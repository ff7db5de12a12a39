// Package riverbench measures River (riverqueue/river), a Postgres-backed
// job queue in Go, on the same private PostgreSQL as lethe: jobs inserted
// one at a time from 64 clients and with InsertMany in batches of 10 and
// 100 from 8, worked to completion by a tuned client, and its job cleaner
// deleting the completed jobs.
package riverbench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"lethe/bench/internal/meter"
	"lethe/bench/internal/payload"
	"lethe/bench/internal/plan"
	"lethe/bench/internal/result"
)

// Env is what River runs against.
type Env struct {
	DSN    string // a database of the shared server for River's tables
	Out    io.Writer
	Plan   plan.Plan
	Sink   result.Sink
	Settle func(ctx context.Context)
}

// Worker settings: River's defaults work about a thousand jobs a second;
// these are the tuned values (more workers, shorter fetch intervals).
const (
	maxWorkers        = 200
	fetchCooldown     = 5 * time.Millisecond
	fetchPollInterval = 50 * time.Millisecond
)

type benchArgs struct {
	P json.RawMessage `json:"p"`
}

func (benchArgs) Kind() string { return "bench" }

type benchWorker struct {
	river.WorkerDefaults[benchArgs]
	done *atomic.Int64
}

func (w *benchWorker) Work(ctx context.Context, job *river.Job[benchArgs]) error {
	w.done.Add(1)
	return nil
}

// Version is the River module version this binary was built with.
func Version() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/riverqueue/river" {
				return d.Version
			}
		}
	}
	return "unknown"
}

// Run measures River with one payload size: inserts, work, cleaner.
func Run(ctx context.Context, env *Env, size int) error {
	pool, err := pgxpool.New(ctx, env.DSN)
	if err != nil {
		return fmt.Errorf("river: connect: %w", err)
	}
	defer pool.Close()
	if err := migrate(ctx, pool); err != nil {
		return err
	}
	if _, err := pool.Exec(ctx, `TRUNCATE river_job`); err != nil {
		return fmt.Errorf("river: empty river_job: %w", err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	payloads := payload.Pool(uint64(size)+17, 1024, size)
	for _, s := range []struct{ batch, clients int }{{1, 64}, {10, 8}, {100, 8}} {
		if err := insert(ctx, env, quiet, payloads, size, s.batch, s.clients); err != nil {
			return err
		}
	}
	var total int64
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM river_job`).Scan(&total); err != nil {
		return fmt.Errorf("river: count jobs: %w", err)
	}
	if err := work(ctx, env, pool, quiet, size, total); err != nil {
		return err
	}
	return clean(ctx, env, pool, quiet, size)
}

func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	m, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return fmt.Errorf("river: migrator: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("river: migrate: %w", err)
	}
	return nil
}

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

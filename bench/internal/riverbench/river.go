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

	"github.com/lethe-mq/lethe/bench/internal/payload"
	"github.com/lethe-mq/lethe/bench/internal/plan"
	"github.com/lethe-mq/lethe/bench/internal/result"
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

package sweepbench

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lethe-mq/lethe/internal/pgtest"
	"github.com/lethe-mq/lethe/internal/schema"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestSweepRate measures the sweep of a 1,000,000-frame backlog against the
// raw baseline. It writes about 2 GB, so it runs only with
// LETHE_SWEEP_BENCH=1 (LETHE_SWEEP_SEGMENTS changes the backlog's size).
func TestSweepRate(t *testing.T) {
	if os.Getenv("LETHE_SWEEP_BENCH") != "1" {
		t.Skip("set LETHE_SWEEP_BENCH=1 to measure the sweep rate (writes about 2 GB)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	pool, err := pgxpool.New(ctx, pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if _, err := schema.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	segments, _ := strconv.Atoi(os.Getenv("LETHE_SWEEP_SEGMENTS"))
	res, err := Run(ctx, pool, Config{Segments: segments, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(res)
}

// TestRunOnASmallBacklog keeps Run itself working in every test run.
func TestRunOnASmallBacklog(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if _, err := schema.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	res, err := Run(ctx, pool, Config{Segments: 30, FramesPerSegment: 10, PayloadBytes: 100, BatchSize: 7})
	if err != nil {
		t.Fatal(err)
	}
	if res.Frames != 300 || res.SweepSteps != 30 || res.SweepRate <= 0 || res.BaseRate <= 0 {
		t.Fatalf("result %+v", res)
	}
}

// Package lethebench measures lethe through its HTTP API: pushes of
// batches of 1, 10 and 100 over 1 to 10,000 partitions, pop+ack with one
// consumer group, fan-out to 5 and 10 groups, end-to-end latency at a fixed
// load, a retention sweep of millions of frames, and lethe's peak memory.
package lethebench

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lethe-mq/lethe/bench/internal/plan"
	"github.com/lethe-mq/lethe/bench/internal/profiling"
	"github.com/lethe-mq/lethe/bench/internal/result"
	"github.com/lethe-mq/lethe/bench/internal/stack"
)

// Env is what the scenarios run against.
type Env struct {
	URL  string
	Pool *pgxpool.Pool // lethe's database: backlogs are written straight into it
	PID  int           // the lethe process, for its memory; 0 when not local
	Out  io.Writer     // progress lines
	Plan plan.Plan
	Tag  string // keeps queue names of different runs apart
	Sink result.Sink
	// Settle runs before each scenario (a CHECKPOINT), so no scenario pays
	// for the previous one's writes.
	Settle func(ctx context.Context)
	// Profile records each measured window under -profile; nil without.
	Profile *profiling.Scope
}

// window is the meter hook that profiles the measured window of the
// result named key under -profile (nil without: nothing is recorded).
func (e *Env) window(ctx context.Context, key string) func(time.Duration) func() {
	if e.Profile == nil {
		return nil
	}
	return func(expected time.Duration) func() { return e.Profile.Window(ctx, key, expected) }
}

func (e *Env) settle(ctx context.Context) {
	if e.Settle != nil {
		e.Settle(ctx)
	}
	if err := stack.ResetPeakRSS(e.PID); err != nil {
		fmt.Fprintf(e.Out, "cannot reset lethe's peak RSS counter (%v): peaks are since start\n", err)
	}
}

// peakMiB is lethe's peak resident memory since the last settle.
func (e *Env) peakMiB() float64 {
	b, err := stack.PeakRSS(e.PID)
	if err != nil {
		return 0
	}
	return float64(b) / (1 << 20)
}

// name is a queue name unique to this run.
func (e *Env) name(format string, args ...any) string {
	return fmt.Sprintf(format, args...) + "-" + e.Tag
}

// coresFrom samples the machine's CPU use by process over the measured
// window that starts at from.
func (e *Env) coresFrom(from time.Time) func() stack.Cores { return stack.CoresFrom(e.PID, from) }

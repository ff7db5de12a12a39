package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lethe-mq/lethe/bench/internal/lethebench"
	"github.com/lethe-mq/lethe/bench/internal/soak"
	"github.com/lethe-mq/lethe/bench/internal/stack"
	"github.com/lethe-mq/lethe/internal/clock"
)

// soak runs the soak against the started lethe and writes its report; a
// failed verdict is a failure of the run.
func (r *runner) soak(ctx context.Context, env *lethebench.Env, outDir string, began time.Time) (*Outcome, error) {
	if env == nil {
		return nil, errors.New("-soak needs lethe")
	}
	spec := r.opts.SoakSpec
	if spec.TimeScale > 1 && r.opts.LetheMode != "inprocess" {
		return nil, errors.New("soak: a time scale needs lethe in-process (-lethe inprocess), whose clock the bench sets")
	}
	spec.Tag = env.Tag
	meta := r.meta
	switch {
	case env.PID == 0:
		meta.LetheMemory = "not measured: lethe ran elsewhere"
	case r.opts.LetheMode == "inprocess":
		meta.LetheMemory = "in-process: the RSS includes the load generator"
	default:
		meta.LetheMemory = "subprocess (go build ./cmd/lethe): VmRSS of its /proc/PID/status at each sample"
	}
	rep, err := soak.Run(ctx, soak.Env{URL: env.URL, Pool: env.Pool, PID: env.PID, Out: r.out, Meta: meta}, spec)
	if err != nil {
		return nil, err
	}
	rep.Meta.Seconds = time.Since(began).Seconds()
	written, err := rep.Write(outDir)
	fmt.Fprintln(r.out, rep.Verdict.Line())
	out := &Outcome{Written: written, Soak: rep}
	if !rep.Verdict.Pass {
		out.Failures = append(out.Failures, "soak: "+rep.Verdict.Line())
	}
	return out, err
}

// letheClock is the clock of an in-process lethe: scaled for a soak that
// compresses its windows, else the wall clock (nil).
func (r *runner) letheClock() clock.Clock {
	if r.opts.Soak > 0 && r.opts.SoakSpec.TimeScale > 1 {
		return stack.NewScaledClock(r.opts.SoakSpec.TimeScale)
	}
	return nil
}

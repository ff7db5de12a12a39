package lethebench

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/lethe-mq/lethe/bench/internal/meter"
	"github.com/lethe-mq/lethe/bench/internal/payload"
	"github.com/lethe-mq/lethe/bench/internal/profiling"
	"github.com/lethe-mq/lethe/bench/internal/result"
	"github.com/lethe-mq/lethe/internal/config"
)

const (
	sweepLoadBatch      = 10
	sweepLoadPartitions = 8
	sweepLoadSenders    = 32
	// sweepStartLimit is how long the sweep may take to delete its first
	// segment before the scenario concludes the server runs no retention.
	sweepStartLimit = 15 * time.Second
)

// The phases of the sweep scenario; a push's latency is recorded under the
// phase its request started in.
const (
	phaseWarmup int32 = iota
	phaseBaseline
	phaseWaiting // retention enabled, the loop has not deleted anything yet
	phaseSweeping
	phaseAfter
)

// Sweep writes a backlog of two-hour-old frames (without sidecar hashes,
// which the loop purges after 15 minutes), measures push latency under a fixed
// load, then turns retention on for the backlog's queue and measures, under
// the same load, how fast the server's retention loop reclaims frames and
// what the pushes' latency becomes meanwhile.
func Sweep(ctx context.Context, env *Env, size int) error {
	old := time.Now().Add(-2 * time.Hour)
	bl := backlog{
		Queue: env.name("sweep-%d", size), Partitions: env.Plan.SweepPartitions,
		Frames: env.Plan.SweepBacklog, PerSegment: env.Plan.SweepSegmentFrames, Size: size, At: old,
	}
	pids, err := bl.write(ctx, env)
	if err != nil {
		return err
	}
	r := result.Result{
		Key: fmt.Sprintf("lethe/sweep/%d", size), System: result.Lethe, Scenario: "sweep",
		Label: fmt.Sprintf("retention sweep of %s frames (%d-frame segments, %d partitions)",
			meter.Group(int64(bl.Frames)), bl.PerSegment, bl.Partitions),
		Payload: size, Partitions: bl.Partitions, Unit: "frames/s",
		Ceiling: fmt.Sprintf("ceiling/segment-delete/%d", size),
	}
	loadQueue := env.name("sweepload-%d", size)
	c := newClient(env.URL, sweepLoadSenders+1)
	defer c.close()
	b := newBodies(loadQueue, sweepLoadPartitions, payload.Pool(11, 256, size))
	for _, body := range b.prime() {
		if err := c.push(ctx, body); err != nil {
			return fmt.Errorf("sweep: create load partitions: %w", err)
		}
	}
	env.settle(ctx)

	// One load runs through every phase.
	var baseline, during meter.Recorder
	var phase atomic.Int32
	var seq atomic.Int64
	var loadErrs atomic.Int64
	loadCtx, stopLoad := context.WithCancel(ctx)
	loadDone := make(chan struct{})
	go func() {
		defer close(loadDone)
		meter.Paced(loadCtx, env.Plan.SweepLoadRate/sweepLoadBatch, sweepLoadSenders, 24*time.Hour, func(ctx context.Context) {
			k := int(seq.Add(1))
			ph := phase.Load()
			at := time.Now()
			if err := c.push(ctx, b.make(k%sweepLoadPartitions, sweepLoadBatch, k*sweepLoadBatch)); err != nil {
				if ctx.Err() == nil {
					loadErrs.Add(1)
				}
				return
			}
			switch ph {
			case phaseBaseline:
				baseline.Add(time.Since(at))
			case phaseSweeping:
				during.Add(time.Since(at))
			}
		})
	}()
	defer func() {
		stopLoad()
		<-loadDone
	}()

	name := fmt.Sprintf("lethe sweep %s", payload.Label(size))
	meter.Sleep(ctx, env.Plan.Warmup)
	phase.Store(phaseBaseline)
	prog := meter.StartProgress(env.Out, name, func() string {
		s := baseline.Summary()
		return fmt.Sprintf("baseline load %d msg/s: push p50 %.1f ms p99 %.1f ms", env.Plan.SweepLoadRate, s.P50, s.P99)
	})
	meter.Sleep(ctx, env.Plan.SweepBaseline)
	prog.Stop()

	initial, err := framesLeft(ctx, env, pids)
	if err != nil {
		return err
	}
	phase.Store(phaseWaiting)
	// The window -profile records: from retention enabled to the sweep
	// done, under the push load.
	endWindow := env.Profile.Window(ctx, r.Key, 0)
	defer endWindow() // on an early return; ending twice is harmless
	began := time.Now()
	if err := c.configure(ctx, bl.Queue, map[string]any{"retentionEnabled": true, "retentionSeconds": 3600}); err != nil {
		return fmt.Errorf("sweep: enable retention on %s: %w", bl.Queue, err)
	}
	var left atomic.Int64
	left.Store(initial)
	prog = meter.StartProgress(env.Out, name, func() string {
		if phase.Load() == phaseWaiting {
			return fmt.Sprintf("%s frames left; waiting for the retention loop's next cycle", meter.Group(left.Load()))
		}
		s := during.Summary()
		return fmt.Sprintf("%s frames left; push p50 %.1f ms p99 %.1f ms", meter.Group(left.Load()), s.P50, s.P99)
	})
	// The sweep began after the last poll that found nothing deleted and
	// ended by the poll that found nothing left: polling every 50 ms, the
	// measured time is at most 0.1 s longer than the sweep.
	var lastUntouched, firstDelete, finished time.Time
	lastUntouched = began
	for {
		n, err := framesLeft(ctx, env, pids)
		if err != nil {
			prog.Stop()
			return err
		}
		now := time.Now()
		left.Store(n)
		if n == initial {
			lastUntouched = now
		} else if firstDelete.IsZero() {
			firstDelete = now
			phase.Store(phaseSweeping)
		}
		if n == 0 {
			finished = now
			break
		}
		if now.Sub(began) > env.Plan.SweepLimit || (firstDelete.IsZero() && now.Sub(began) > sweepStartLimit) || ctx.Err() != nil {
			break
		}
		meter.Sleep(ctx, 50*time.Millisecond)
	}
	phase.Store(phaseAfter)
	prog.Stop()
	stopLoad()
	<-loadDone
	endWindow()

	end := finished
	if end.IsZero() {
		end = time.Now()
	}
	deleted := initial - left.Load()
	base, dur := baseline.Summary(), during.Summary()
	r.Baseline, r.Latency = &base, &dur
	r.Count, r.Seconds = deleted, end.Sub(lastUntouched).Seconds()
	if r.Seconds > 0 && deleted > 0 {
		r.Value = float64(deleted) / r.Seconds
	}
	r.Errors = loadErrs.Load()
	r.PeakRSSMiB = env.peakMiB()
	if firstDelete.IsZero() {
		r.Skipped = fmt.Sprintf("the server's retention loop deleted nothing within %s of retention being enabled: is the retention service wired into lethe serve?", sweepStartLimit)
		env.Sink.Add(r)
		return nil
	}
	state := "all reclaimed"
	if finished.IsZero() {
		state = fmt.Sprintf("time limit: %s frames left", meter.Group(left.Load()))
	}
	duringText := fmt.Sprintf("p50/p99 %.1f/%.1f ms during the sweep (%d pushes)", dur.P50, dur.P99, dur.Count)
	if dur.Count == 0 {
		duringText = "no push finished during the sweep (too short to say)"
	}
	r.Notes = fmt.Sprintf("%s in %.2f s of sweeping, which began %.1f s after retention was enabled (the loop's interval); RETENTION_MAX_BUSY %s; push at %d msg/s, batch %d: %s vs %.1f/%.1f ms without",
		state, r.Seconds, lastUntouched.Sub(began).Seconds(), maxBusy(), env.Plan.SweepLoadRate, sweepLoadBatch,
		duringText, base.P50, base.P99)
	env.Sink.Add(r)
	return nil
}

// maxBusy is the duty cycle the server's retention loop runs with, as
// the server reads it from the environment it inherits from the bench: set
// RETENTION_MAX_BUSY to compare push latency during a sweep at several
// values.
func maxBusy() string {
	cfg, err := config.FromEnv()
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	return fmt.Sprint(cfg.Retention.MaxBusy)
}

// framesLeft counts the backlog's frames still stored.
func framesLeft(ctx context.Context, env *Env, pids []uuid.UUID) (int64, error) {
	var n int64
	err := env.Pool.QueryRow(ctx, `SELECT `+profiling.NotProfiled+` coalesce(sum(frame_count), 0) FROM lethe.segments WHERE partition_id = ANY($1)`, pids).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("sweep: count frames left: %w", err)
	}
	return n, nil
}

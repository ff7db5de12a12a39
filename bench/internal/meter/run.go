package meter

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// Spec describes one bounded load.
type Spec struct {
	Name     string
	Unit     string // what one item is, for the progress line: "msg", "delivery"
	Workers  int
	Warmup   time.Duration // work done before this is not counted
	Duration time.Duration // the measured window after the warmup
	// Total, when positive, ends the run as soon as this many items are
	// counted: a backlog is drained. Rate is then over the time it took.
	Total int64
	// Latency records every op's duration during the measured window.
	Latency bool
	Out     io.Writer
	// Window, when set, is called as the measured window opens, with the
	// window's expected length (0 when it ends on Total), and the function
	// it returns once the window has closed and the workers have stopped:
	// the hook -profile records a window with.
	Window func(expected time.Duration) (end func())
}

// Op does one unit of work for worker w and reports how many items it
// completed. It must return soon after ctx ends.
type Op func(ctx context.Context, w int) (int, error)

// Outcome is what a run measured.
type Outcome struct {
	Items      int64
	Elapsed    time.Duration // the measured window actually used
	Rate       float64       // Items per second over Elapsed
	PerSecond  []float64     // the rate in each second of the window, for the spread
	Errors     int64
	FirstError string
	Latency    Summary // op durations, when Spec.Latency
	Drained    bool    // Total was reached before the window ended
}

// Run drives spec.Workers goroutines calling op until the window ends (or
// Total items are done), printing a progress line every second.
func Run(ctx context.Context, spec Spec, op Op) Outcome {
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		items     atomic.Int64
		errs      Errors
		measuring atomic.Bool
		rec       Recorder
		drained   = make(chan struct{})
		drainOnce sync.Once
		wg        sync.WaitGroup
	)
	endWindow := func() {}
	openWindow := func() {
		if spec.Window != nil {
			endWindow = spec.Window(spec.expected())
		}
	}
	if spec.Warmup <= 0 {
		openWindow()
		measuring.Store(true)
	}
	for w := range spec.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for runCtx.Err() == nil {
				began := time.Now()
				n, err := op(runCtx, w)
				if runCtx.Err() != nil {
					return // an op cut short by the end of the window does not count
				}
				if err != nil {
					errs.Note(err)
					Sleep(runCtx, 20*time.Millisecond) // a failing server is not hammered
					continue
				}
				if !measuring.Load() {
					continue
				}
				if spec.Latency {
					rec.Add(time.Since(began))
				}
				if total := items.Add(int64(n)); spec.Total > 0 && total >= spec.Total {
					drainOnce.Do(func() { close(drained) })
				}
			}
		}()
	}

	start := time.Now()
	measureStart := start
	if spec.Warmup > 0 {
		measureStart = start.Add(spec.Warmup)
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	endTimer := time.NewTimer(time.Until(measureStart.Add(spec.Duration)))
	defer endTimer.Stop()
	warmTimer := time.NewTimer(spec.Warmup)
	defer warmTimer.Stop()
	var out Outcome
	lastT, lastN := measureStart, int64(0)
	stopped := time.Time{}
loop:
	for {
		select {
		case <-ctx.Done():
			stopped = time.Now()
			break loop
		case <-warmTimer.C:
			if !measuring.Load() {
				openWindow()
				measureStart, lastT = time.Now(), time.Now()
				endTimer.Reset(spec.Duration)
				measuring.Store(true)
			}
		case <-drained:
			stopped = time.Now()
			out.Drained = true
			break loop
		case <-endTimer.C:
			stopped = time.Now()
			break loop
		case now := <-tick.C:
			n := items.Load()
			phase := "warmup "
			rate := 0.0
			if measuring.Load() {
				phase = fmt.Sprintf("%3.0f/%.0fs", now.Sub(measureStart).Seconds(), spec.Duration.Seconds())
				if dt := now.Sub(lastT).Seconds(); dt >= 0.5 {
					rate = float64(n-lastN) / dt
					out.PerSecond = append(out.PerSecond, rate)
				}
				lastT, lastN = now, n
			}
			fmt.Fprintf(spec.Out, "%-44s %s %10s %s/s  total %s  errors %d\n",
				spec.Name, phase, Group(int64(rate)), spec.Unit, Group(n), errs.Count())
		}
	}
	cancel()
	wg.Wait()
	endWindow()
	out.Items = items.Load()
	out.Elapsed = stopped.Sub(measureStart)
	if out.Elapsed > 0 {
		out.Rate = float64(out.Items) / out.Elapsed.Seconds()
	}
	out.Errors, out.FirstError = errs.Count(), errs.First()
	out.Latency = rec.Summary()
	fmt.Fprintf(spec.Out, "%-44s done: %s %s/s over %.1fs (%s %s, %d errors)\n",
		spec.Name, Group(int64(out.Rate)), spec.Unit, out.Elapsed.Seconds(), Group(out.Items), spec.Unit, out.Errors)
	return out
}

// expected is how long the measured window should last: Duration, or
// unknown (0) when it ends as soon as Total items are done.
func (s Spec) expected() time.Duration {
	if s.Total > 0 {
		return 0
	}
	return s.Duration
}

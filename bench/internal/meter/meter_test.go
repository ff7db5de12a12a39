package meter

import (
	"context"
	"errors"
	"io"
	"sync/atomic"
	"testing"
	"time"
)

func TestRunStopsWhenTheWindowEnds(t *testing.T) {
	var calls atomic.Int64
	began := time.Now()
	out := Run(context.Background(), Spec{Name: "t", Unit: "op", Workers: 4, Warmup: 100 * time.Millisecond,
		Duration: 300 * time.Millisecond, Latency: true, Out: io.Discard},
		func(ctx context.Context, _ int) (int, error) {
			calls.Add(1)
			Sleep(ctx, time.Millisecond)
			return 2, nil
		})
	took := time.Since(began)
	if took < 400*time.Millisecond || took > 2*time.Second {
		t.Fatalf("run took %s, want about warmup+duration = 400ms", took)
	}
	if out.Elapsed < 250*time.Millisecond || out.Elapsed > time.Second {
		t.Fatalf("measured window %s, want about 300ms", out.Elapsed)
	}
	if out.Items == 0 || out.Items >= 2*calls.Load() || out.Items%2 != 0 {
		t.Fatalf("items %d of %d calls: want only the measured calls' items, 2 each", out.Items, calls.Load())
	}
	if out.Rate <= 0 || out.Latency.Count == 0 || out.Latency.P50 <= 0 {
		t.Fatalf("rate %.0f, latency %+v: want both measured", out.Rate, out.Latency)
	}
}

func TestRunEndsWhenTheBacklogIsDrained(t *testing.T) {
	out := Run(context.Background(), Spec{Name: "t", Workers: 2, Duration: time.Minute, Total: 100, Out: io.Discard},
		func(ctx context.Context, _ int) (int, error) { return 10, nil })
	if !out.Drained || out.Items < 100 || out.Elapsed > 5*time.Second {
		t.Fatalf("drained=%v items=%d elapsed=%s: want the run to end as soon as 100 items are done", out.Drained, out.Items, out.Elapsed)
	}
}

func TestRunCountsErrors(t *testing.T) {
	out := Run(context.Background(), Spec{Name: "t", Workers: 1, Duration: 200 * time.Millisecond, Out: io.Discard},
		func(ctx context.Context, _ int) (int, error) { return 1, errors.New("refused") })
	if out.Items != 0 || out.Errors == 0 || out.FirstError != "refused" {
		t.Fatalf("items=%d errors=%d first=%q: failed ops must count as errors, not items", out.Items, out.Errors, out.FirstError)
	}
}

func TestPacedOffersTheRate(t *testing.T) {
	var n atomic.Int64
	// The function returns at once, so a tick is missed only when the
	// machine stalls the workers; a loaded CI machine may do that once or
	// twice, which is not what this test is about.
	started, missed := Paced(context.Background(), 200, 4, 500*time.Millisecond, func(context.Context) { n.Add(1) })
	if started+missed < 80 || started+missed > 120 || missed > 5 || n.Load() != started {
		t.Fatalf("started %d (ran %d), missed %d: want about 100 calls in 0.5 s at 200/s", started, n.Load(), missed)
	}
}

func TestSummaryPercentiles(t *testing.T) {
	var r Recorder
	for i := 100; i >= 1; i-- {
		r.Add(time.Duration(i) * time.Millisecond)
	}
	s := r.Summary()
	if s.Count != 100 || s.P50 != 50 || s.P99 != 99 || s.Max != 100 {
		t.Fatalf("summary %+v: want count 100, p50 50, p99 99, max 100", s)
	}
	if (&Recorder{}).Summary() != (Summary{}) {
		t.Fatal("an empty recorder must summarise to zeros")
	}
}

func TestGroup(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -5000: "-5,000"} {
		if got := Group(n); got != want {
			t.Errorf("Group(%d) = %q, want %q", n, got, want)
		}
	}
}

// The Window hook brackets the measured window: opened after the warmup
// with the window's length (0 for a drain), ended once the workers stopped.
func TestRunWindowHook(t *testing.T) {
	var calls, atOpen, atEnd atomic.Int64
	var opened, ended atomic.Int32
	var expected atomic.Int64
	spec := Spec{Name: "t", Workers: 2, Warmup: 100 * time.Millisecond, Duration: 200 * time.Millisecond, Out: io.Discard,
		Window: func(d time.Duration) func() {
			opened.Add(1)
			expected.Store(int64(d))
			atOpen.Store(calls.Load())
			return func() { ended.Add(1); atEnd.Store(calls.Load()) }
		}}
	Run(context.Background(), spec, func(ctx context.Context, _ int) (int, error) {
		calls.Add(1)
		Sleep(ctx, time.Millisecond)
		return 1, nil
	})
	if opened.Load() != 1 || ended.Load() != 1 || time.Duration(expected.Load()) != 200*time.Millisecond {
		t.Fatalf("opened %d, ended %d times, expected %s: want once each, with the window's 200ms",
			opened.Load(), ended.Load(), time.Duration(expected.Load()))
	}
	if atOpen.Load() == 0 || atEnd.Load() != calls.Load() {
		t.Fatalf("%d calls before the window opened, %d of %d when it ended: want the warmup's before, every call before the end",
			atOpen.Load(), atEnd.Load(), calls.Load())
	}
	spec.Warmup, spec.Total = 0, 10
	opened.Store(0)
	Run(context.Background(), spec, func(ctx context.Context, _ int) (int, error) { return 1, nil })
	if opened.Load() != 1 || expected.Load() != 0 {
		t.Fatalf("a drain opened %d windows expecting %s: want one of unknown length (0)", opened.Load(), time.Duration(expected.Load()))
	}
}

func TestStampedCutsASpan(t *testing.T) {
	var s Stamped
	t0 := time.Now()
	ms := time.Millisecond
	s.Add(t0, 2*ms)            // idle, ends before the span
	s.Add(t0.Add(5*ms), 40*ms) // starts before the span, stalled into it
	s.Add(t0.Add(20*ms), 3*ms) // inside
	s.Add(t0.Add(60*ms), 1*ms) // after
	if got := s.Started(t0, t0.Add(10*ms)); got.Count != 2 || got.Max != 40 {
		t.Fatalf("started in [0, 10 ms): %+v, want the first two calls", got)
	}
	got := s.Overlapping(t0.Add(10*ms), t0.Add(30*ms))
	if got.Count != 2 || got.Max != 40 || got.P50 != 3 {
		t.Fatalf("running during [10, 30 ms]: %+v, want the stalled call and the one inside", got)
	}
	if got := s.Overlapping(t0.Add(100*ms), t0.Add(200*ms)); got.Count != 0 {
		t.Fatalf("a span nothing ran in: %+v", got)
	}
}

// Errors counts every failure and keeps the first one's message.
func TestErrorsKeepTheFirst(t *testing.T) {
	var e Errors
	if e.Count() != 0 || e.First() != "" {
		t.Fatalf("zero value: %d, %q", e.Count(), e.First())
	}
	e.Note(errors.New("first"))
	e.Note(errors.New("second"))
	if e.Count() != 2 || e.First() != "first" {
		t.Errorf("after two: %d, %q; want 2, \"first\"", e.Count(), e.First())
	}
}

// AwaitDelivered returns as soon as the deliveries catch up, and gives up
// at its limit when they do not.
func TestAwaitDeliveredStopsWhenCaughtUpOrAtItsLimit(t *testing.T) {
	var delivered, sent atomic.Int64
	sent.Store(2)
	go func() {
		time.Sleep(50 * time.Millisecond)
		delivered.Store(2)
	}()
	start := time.Now()
	AwaitDelivered(&delivered, &sent, 10*time.Second)
	if took := time.Since(start); took > 5*time.Second || delivered.Load() != 2 {
		t.Errorf("returned after %s with %d delivered, want soon after both arrived", took, delivered.Load())
	}
	sent.Store(3)
	start = time.Now()
	AwaitDelivered(&delivered, &sent, 100*time.Millisecond)
	if took := time.Since(start); took < 100*time.Millisecond {
		t.Errorf("returned after %s with one message missing, want the whole limit", took)
	}
}

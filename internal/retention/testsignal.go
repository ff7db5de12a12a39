package retention

import "time"

// TestSignals are hooks for tests: each does nothing until a test calls
// Init, then the loop reports on it and tests wait with WaitOrTimeout
// instead of sleeping (River's testsignal pattern).
type TestSignals struct {
	// CycleDone reports every cycle the loop ran, skipped ones included.
	CycleDone testSignal[CycleResult]
	// Step is called before every step (no transaction or row lock is
	// held); a test can block in it or return an error to fail the step.
	Step func(phase string, n int) error
	// Rest, when set, replaces the duty cycle's wait after a step: it is
	// told how long the step worked and how long the loop would rest.
	Rest func(worked, rest time.Duration)
}

// Init arms the signals.
func (s *TestSignals) Init() { s.CycleDone.Init() }

// testSignal is a buffered channel that is nil, and so ignored, in
// production.
type testSignal[T any] struct{ ch chan T }

// Init makes the signal deliver.
func (s *testSignal[T]) Init() { s.ch = make(chan T, 100) }

// Signal reports v without ever blocking the caller.
func (s *testSignal[T]) Signal(v T) {
	if s.ch == nil {
		return
	}
	select {
	case s.ch <- v:
	default:
	}
}

// WaitOrTimeout returns the next value, failing the test after 10 s.
func (s *testSignal[T]) WaitOrTimeout(t failer) T {
	t.Helper()
	select {
	case v := <-s.ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatal("timed out waiting for a test signal")
		panic("unreachable")
	}
}

// failer is the part of testing.TB the signals use, so production code
// does not import testing.
type failer interface {
	Helper()
	Fatal(args ...any)
}

// Package testsignal lets tests wait for a background step instead of
// sleeping (River's testsignal pattern): production code calls Signal,
// which does nothing until a test calls Init; the test then waits with
// WaitOrTimeout.
package testsignal

import "time"

// Timeout is how long WaitOrTimeout waits before failing the test.
const Timeout = 10 * time.Second

// Signal is a buffered channel that is nil, and so ignored, until Init.
type Signal[T any] struct{ ch chan T }

// Init makes the signal deliver. Call it before the code that signals
// starts.
func (s *Signal[T]) Init() { s.ch = make(chan T, 1000) }

// Signal reports v without ever blocking the caller (a full buffer drops
// it).
func (s *Signal[T]) Signal(v T) {
	if s.ch == nil {
		return
	}
	select {
	case s.ch <- v:
	default:
	}
}

// WaitOrTimeout returns the next value, failing the test after Timeout.
func (s *Signal[T]) WaitOrTimeout(t Failer) T {
	t.Helper()
	select {
	case v := <-s.ch:
		return v
	case <-time.After(Timeout):
		t.Fatal("timed out waiting for a test signal")
		panic("unreachable")
	}
}

// WaitFor returns the first value for which match is true, discarding the
// others, failing the test after Timeout.
func (s *Signal[T]) WaitFor(t Failer, match func(T) bool) T {
	t.Helper()
	deadline := time.After(Timeout)
	for {
		select {
		case v := <-s.ch:
			if match(v) {
				return v
			}
		case <-deadline:
			t.Fatal("timed out waiting for a matching test signal")
			panic("unreachable")
		}
	}
}

// Failer is the part of testing.TB a signal uses, so production code does
// not import testing.
type Failer interface {
	Helper()
	Fatal(args ...any)
}

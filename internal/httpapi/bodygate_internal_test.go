package httpapi

import (
	"context"
	"testing"
	"time"
)

// A request waiting for room is woken by the release that makes it, not
// by its wait running out; a release with nobody waiting wakes nobody.
// Fails when a release does not reach a waiter (it would answer 503 after
// the whole wait).
func TestBodyGateWakesWaitersOnRelease(t *testing.T) {
	g := newBodyGate(800, time.Minute)
	first := g.open(context.Background(), false)
	if err := first.take(700); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	second := g.open(context.Background(), false)
	go func() { done <- second.take(100) }()
	for {
		g.mu.Lock()
		w := g.waiting
		g.mu.Unlock()
		if w == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	first.release()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the waiter answered %v after the release, want room", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the release did not wake the waiting request")
	}
	if got := g.inUse.Load(); got != 100 {
		t.Errorf("in use %d after the handover, want 100", got)
	}
	freed := g.freed
	second.release()
	if g.freed != freed {
		t.Error("a release with nobody waiting replaced the wake-up channel")
	}
}

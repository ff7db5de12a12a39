package slowstep

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/internal/testkit"
)

// syncBuffer is a log sink the timer goroutine and the test share.
type syncBuffer = testkit.SyncBuffer

func TestSlowStepIsAnnouncedThenTimed(t *testing.T) {
	var buf syncBuffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	s := Begin(log, "initializing a cluster", time.Millisecond, "dir", "/x")
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(buf.String(), "initializing a cluster...") {
		if time.Now().After(deadline) {
			t.Fatalf("step not announced; log: %q", buf.String())
		}
		time.Sleep(time.Millisecond)
	}
	if !strings.Contains(buf.String(), "dir=/x") {
		t.Errorf("announcement lacks its attributes: %q", buf.String())
	}
	s.End()
	s.End() // a second End is harmless
	if got := strings.Count(buf.String(), "initializing a cluster: done"); got != 1 {
		t.Fatalf("want one 'done' line, got %d; log: %q", got, buf.String())
	}
}

func TestFastStepIsQuiet(t *testing.T) {
	var buf syncBuffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	Begin(log, "connecting", time.Hour).End()
	if buf.String() != "" {
		t.Fatalf("fast step logged: %q", buf.String())
	}
}

package cli

import (
	"io"
	"log/slog"
	"runtime/debug"
	"testing"
)

// lethe serve sets GOGC 400 and a 72 MiB soft memory limit, unless the
// environment names its own.
func TestTuneGCSetsTheDefaultsUnlessTheEnvironmentDoes(t *testing.T) {
	percent, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetGCPercent(percent); debug.SetMemoryLimit(limit) })
	log := slog.New(slog.NewTextHandler(io.Discard, nil))

	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	debug.SetMemoryLimit(1 << 40)
	tuneGC(log)
	if got := debug.SetGCPercent(100); got != 400 {
		t.Fatalf("GOGC %d, want 400", got)
	}
	if got := debug.SetMemoryLimit(-1); got != 72<<20 {
		t.Fatalf("memory limit %d, want 72 MiB", got)
	}

	t.Setenv("GOGC", "150")
	t.Setenv("GOMEMLIMIT", "1GiB")
	debug.SetMemoryLimit(1 << 40)
	tuneGC(log)
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("GOGC set in the environment was overridden to %d", got)
	}
	if got := debug.SetMemoryLimit(-1); got != 1<<40 {
		t.Fatalf("GOMEMLIMIT set in the environment was overridden to %d", got)
	}
}

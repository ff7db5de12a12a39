package stack

import (
	"os"
	"syscall"
	"testing"
	"time"
)

// TestSampleCPUCountsTheBenchItself burns CPU in this process and expects
// the bench's share, not lethe's or anyone else's, to show it. It burns a
// fixed amount of this process's CPU time (getrusage), not of wall time,
// so a machine busy with other tests only makes it take longer.
func TestSampleCPUCountsTheBenchItself(t *testing.T) {
	before := SampleCPU(0)
	used0 := selfCPU(t)
	x := 0
	for selfCPU(t)-used0 < 300*time.Millisecond {
		for range 100_000 {
			x++
		}
	}
	after := SampleCPU(0)
	used := selfCPU(t) - used0
	got := time.Duration(after.bench-before.bench) * time.Second / userHZ
	// /proc counts whole ticks (10 ms) and this process also ran the
	// samples: allow two ticks and a tenth either way.
	if slack := 20*time.Millisecond + used/10; got < used-slack || got > used+slack {
		t.Fatalf("the bench's CPU read %s, getrusage says this process used %s (%d turns)", got, used, x)
	}
	if after.lethe != before.lethe {
		t.Fatalf("no lethe pid given, yet lethe used %d ticks", after.lethe-before.lethe)
	}
	same := SampleCPU(os.Getpid())
	if got := same.CoresSince(same); got.Total() != 0 {
		t.Fatalf("a sample against itself reads %+v, want nothing", got)
	}
}

// selfCPU is this process's CPU time so far, user and system.
func selfCPU(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestPerMessageDividesEachProcessGroupsCoresByTheRate(t *testing.T) {
	c := Cores{Lethe: 0.5, Postgres: 1, Bench: 0.25, Others: 0.05}
	want := "CPU per message: lethe 500 µs, PostgreSQL 1000 µs, load generator 250 µs, all 1800 µs"
	if got := c.PerMessage(1000); got != want {
		t.Fatalf("PerMessage(1000) = %q, want %q", got, want)
	}
	if got := c.PerMessage(0); got != "CPU per message: no messages" {
		t.Fatalf("PerMessage(0) = %q", got)
	}
}

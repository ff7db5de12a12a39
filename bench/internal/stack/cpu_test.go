package stack

import (
	"os"
	"testing"
	"time"
)

// TestSampleCPUCountsTheBenchItself burns CPU in this process and expects
// the bench's share, not lethe's or anyone else's, to show it.
func TestSampleCPUCountsTheBenchItself(t *testing.T) {
	before := SampleCPU(0)
	deadline := time.Now().Add(300 * time.Millisecond)
	x := 0
	for time.Now().Before(deadline) {
		x++
	}
	c := SampleCPU(0).CoresSince(before)
	if c.Bench < 0.5 {
		t.Fatalf("a busy loop of 300 ms read as %.2f cores of the bench (%+v, %d turns)", c.Bench, c, x)
	}
	if c.Lethe != 0 {
		t.Fatalf("no lethe pid given, yet lethe used %.2f cores", c.Lethe)
	}
	same := SampleCPU(os.Getpid())
	if got := same.CoresSince(same); got.Total() != 0 {
		t.Fatalf("a sample against itself reads %+v, want nothing", got)
	}
}

package testsignal_test

import (
	"testing"

	"github.com/lethe-mq/lethe/internal/testsignal"
)

func TestSignal(t *testing.T) {
	t.Parallel()
	var off testsignal.Signal[int]
	off.Signal(1) // not armed: ignored, never blocks
	var s testsignal.Signal[int]
	s.Init()
	for i := range 3 {
		s.Signal(i)
	}
	if v := s.WaitOrTimeout(t); v != 0 {
		t.Errorf("first value %d, want 0", v)
	}
	if v := s.WaitFor(t, func(v int) bool { return v == 2 }); v != 2 {
		t.Errorf("matching value %d, want 2", v)
	}
}

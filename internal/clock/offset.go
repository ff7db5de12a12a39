package clock

import (
	"fmt"
	"sync"
	"time"
)

// Offset is another clock moved forward by an offset that only grows: the
// replica clock of LETHE_TEST_CLOCK=1, which black-box tests advance over
// HTTP so a week passes in a request. It never goes back.
type Offset struct {
	base Clock
	mu   sync.Mutex
	by   time.Duration
}

// NewOffset returns base, not moved yet.
func NewOffset(base Clock) *Offset { return &Offset{base: base} }

// Now is base's time plus the offset.
func (o *Offset) Now() time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.base.Now().Add(o.by)
}

// Advance moves the clock forward by d, which must be positive.
func (o *Offset) Advance(d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("the test clock only moves forward: advance must be positive, got %v", d)
	}
	o.mu.Lock()
	o.by += d
	o.mu.Unlock()
	return nil
}

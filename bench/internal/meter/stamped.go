package meter

import (
	"sync"
	"time"
)

// Stamped keeps latency samples with the time each call started, so that
// a distribution can be cut to a span found out afterwards (a drop's,
// which the server reports when it is done). Safe for concurrent use.
type Stamped struct {
	mu sync.Mutex
	at []time.Time
	d  []time.Duration
}

// Add records one call that started at at and took d.
func (s *Stamped) Add(at time.Time, d time.Duration) {
	s.mu.Lock()
	s.at = append(s.at, at)
	s.d = append(s.d, d)
	s.mu.Unlock()
}

// Started summarizes the calls that started in [from, to).
func (s *Stamped) Started(from, to time.Time) Summary {
	return s.summary(func(at time.Time, _ time.Duration) bool { return !at.Before(from) && at.Before(to) })
}

// Overlapping summarizes the calls running at some moment of [from, to]:
// started before to ended, ended after from began. A call that a stall in
// the span held up counts even when it started just before.
func (s *Stamped) Overlapping(from, to time.Time) Summary {
	return s.summary(func(at time.Time, d time.Duration) bool { return !at.After(to) && at.Add(d).After(from) })
}

func (s *Stamped) summary(keep func(time.Time, time.Duration) bool) Summary {
	var r Recorder
	s.mu.Lock()
	for i, at := range s.at {
		if keep(at, s.d[i]) {
			r.v = append(r.v, s.d[i])
		}
	}
	s.mu.Unlock()
	return r.Summary()
}

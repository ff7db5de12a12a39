// Package slowstep says what a start-up step is doing once it has taken
// longer than a moment, so a first start that runs initdb or a long
// migration is not mistaken for a hang, while a fast start stays quiet.
package slowstep

import (
	"log/slog"
	"sync"
	"time"
)

// After is how long a step may run before it is announced.
const After = time.Second

// Step is one announced piece of work; End it when the work is over.
type Step struct {
	log   *slog.Logger
	what  string
	began time.Time
	timer *time.Timer

	mu        sync.Mutex
	announced bool
	ended     bool
}

// Begin starts timing a step described by what ("initializing a
// PostgreSQL cluster in /x", say). If it is still running after `after`,
// what is logged at INFO, and End then logs how long it took.
func Begin(log *slog.Logger, what string, after time.Duration, attrs ...any) *Step {
	s := &Step{log: log, what: what, began: time.Now()}
	s.timer = time.AfterFunc(after, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.ended {
			return
		}
		s.announced = true
		log.Info(what+"...", attrs...)
	})
	return s
}

// End stops the timer; a step that was announced logs its duration.
func (s *Step) End() {
	s.timer.Stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return
	}
	s.ended = true
	if s.announced {
		s.log.Info(s.what+": done", "took", time.Since(s.began).Round(time.Millisecond))
	}
}

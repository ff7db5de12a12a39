package retention

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Service runs the maintenance loop of one replica. Several replicas may
// run one each on the same database: the advisory lock lets one sweep per
// cycle.
type Service struct {
	pool    *pgxpool.Pool
	cfg     Config
	metrics *collectors

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

// New returns a stopped Service on pool, whose schema must be migrated.
func New(pool *pgxpool.Pool, cfg Config) *Service {
	return &Service{pool: pool, cfg: cfg.withDefaults(), metrics: newCollectors()}
}

// Start runs the loop in the background until Stop: a cycle at once, then
// one every Interval. ctx is not kept; Stop ends the loop.
func (s *Service) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel != nil {
		return errors.New("retention: already started")
	}
	loopCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.cancel, s.done = cancel, make(chan struct{})
	go s.loop(loopCtx, s.done)
	s.cfg.Logger.Info("retention loop started", "interval_ms", s.cfg.Interval.Milliseconds(),
		"batch_size", s.cfg.BatchSize, "lock_id", s.cfg.LockID)
	return nil
}

// Stop ends the loop and waits for a cycle in flight to finish its step;
// the lock is released on the way out.
func (s *Service) Stop() {
	s.mu.Lock()
	cancel, done := s.cancel, s.done
	s.cancel, s.done = nil, nil
	s.mu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	<-done
}

func (s *Service) loop(ctx context.Context, done chan struct{}) {
	defer close(done)
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		res, err := s.RunCycle(ctx)
		if err != nil && !errors.Is(err, context.Canceled) {
			s.cfg.Logger.Error("retention cycle failed", "error", err)
		}
		s.cfg.TestSignals.CycleDone.Signal(res)
		timer.Reset(s.cfg.Interval)
	}
}

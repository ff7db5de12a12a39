package retention

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lethe-mq/lethe/internal/inspect"
	"github.com/lethe-mq/lethe/internal/pguuid"
)

// Service runs the maintenance loop of one replica. Several replicas may
// run one each on the same database: the advisory lock lets one sweep per
// cycle.
type Service struct {
	// pool serves the read models (status, explain); the loop
	// never takes a connection from it.
	pool     *pgxpool.Pool
	connConf *pgx.ConnConfig
	cfg      Config
	metrics  *collectors
	// reads are the read models explain shares with the tier view.
	reads *inspect.Reader

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}

	// cycleMu makes cycles one at a time and guards conn, the loop's own
	// connection, opened on the first cycle and again after it breaks.
	cycleMu sync.Mutex
	conn    *pgx.Conn
	// heads are what the last work list read of the heads of queues
	// with no deleting rule (guarded by cycleMu).
	heads heads
}

// New returns a stopped Service on pool's database, whose schema must be
// migrated. The loop opens a connection of its own with pool's settings.
func New(pool *pgxpool.Pool, cfg Config) *Service {
	connConf := pool.Config().ConnConfig.Copy()
	if connConf.RuntimeParams == nil {
		connConf.RuntimeParams = map[string]string{}
	}
	connConf.RuntimeParams["application_name"] = "lethe retention"
	cfg = cfg.withDefaults()
	return &Service{pool: pool, connConf: connConf, cfg: cfg, metrics: newCollectors(),
		reads: inspect.New(inspect.Config{Pool: pool, Clock: cfg.Clock, Logger: cfg.Logger})}
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
		"batch_size", s.cfg.BatchSize, "lock_id", s.cfg.LockID, "max_busy", s.cfg.MaxBusy)
	return nil
}

// Stop ends the loop, waits for a cycle in flight to finish its step (the
// lock is released on the way out) and closes the loop's connection. It
// may be called on a Service never started.
func (s *Service) Stop() {
	s.mu.Lock()
	cancel, done := s.cancel, s.done
	s.cancel, s.done = nil, nil
	s.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
	s.cycleMu.Lock()
	defer s.cycleMu.Unlock()
	if s.conn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), unlockTimeout)
		_ = s.conn.Close(ctx)
		cancel()
		s.conn = nil
	}
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
			s.cfg.Logger.Error("retention cycle stopped early", "error", err)
		}
		s.cfg.TestSignals.CycleDone.Signal(res)
		timer.Reset(s.cfg.Interval)
	}
}

// connection returns the loop's connection, opening it (within
// ConnectTimeout) when there is none or the last one broke. The caller
// holds cycleMu.
func (s *Service) connection(ctx context.Context) (*pgx.Conn, error) {
	if s.conn != nil && !s.conn.IsClosed() {
		return s.conn, nil
	}
	if s.conn != nil {
		s.cfg.Logger.Warn("retention: the loop's connection broke; opening a new one")
		s.conn = nil
	}
	cctx, cancel := context.WithTimeout(ctx, s.cfg.ConnectTimeout)
	defer cancel()
	conn, err := pgx.ConnectConfig(cctx, s.connConf.Copy())
	if err != nil {
		return nil, fmt.Errorf("retention: open the loop's connection (within %v): %w", s.cfg.ConnectTimeout, err)
	}
	pguuid.Register(conn.TypeMap())
	s.conn = conn
	return conn, nil
}

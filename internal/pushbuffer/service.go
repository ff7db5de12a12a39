// Package pushbuffer is Queen's maintenance mode. With push maintenance on,
// pushes are kept in a durable local buffer (LETHE_DATA_DIR/buffer) instead
// of the database; when it is turned off, on any replica, each replica
// replays its own buffer through the engine, exactly once thanks to
// transaction-id deduplication. With pop maintenance on, pops answer empty.
// The switches live in lethe.settings so every replica sees them; each
// replica polls them about once a second and never queries per request.
package pushbuffer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lethe-mq/lethe/internal/clock"
	"github.com/lethe-mq/lethe/internal/engine"
)

// Defaults for Config.
const (
	PollIntervalDefault  = time.Second
	RetryIntervalDefault = 5 * time.Second
	ReplayBatchDefault   = 500
)

// Config wires a Service.
type Config struct {
	Engine *engine.Engine
	// Dir holds the buffer files: LETHE_DATA_DIR/buffer.
	Dir    string
	Logger *slog.Logger
	Clock  clock.Clock
	// MaxPayloadBytes is the engine's limit, checked before buffering so a
	// message the replay would refuse is refused now.
	MaxPayloadBytes int
	// PollInterval is how often the switches are read: how stale a
	// replica's view of them may be.
	PollInterval time.Duration
	// RetryInterval is how soon a failed replay is tried again.
	RetryInterval time.Duration
	// ReplayBatch is the most items replayed in one engine push.
	ReplayBatch int
}

// Service holds one replica's view of the switches and its buffer.
type Service struct {
	cfg   Config
	eng   *engine.Engine
	pool  *pgxpool.Pool
	log   *slog.Logger
	clock clock.Clock
	buf   *fileBuffer

	push    atomic.Bool
	pop     atomic.Bool
	healthy atomic.Bool

	// applyMu and gen keep a poll that raced with a local change from
	// undoing it: a poll applies its result only if no change happened
	// while it ran.
	applyMu sync.Mutex
	gen     atomic.Int64

	replayMu sync.Mutex
	progress int // lines of the replaying file already pushed by this process

	wake chan struct{}
	stop context.CancelFunc
	wg   sync.WaitGroup
}

// New opens the buffer directory (creating nothing yet) and counts what a
// previous run left there.
func New(cfg Config) (*Service, error) {
	if cfg.Engine == nil || cfg.Dir == "" {
		return nil, errors.New("pushbuffer: Engine and Dir are required")
	}
	cfg.Logger = cmp.Or(cfg.Logger, slog.Default())
	cfg.Clock = cmp.Or[clock.Clock](cfg.Clock, clock.Real{})
	cfg.MaxPayloadBytes = cmp.Or(cfg.MaxPayloadBytes, engine.MaxPayloadBytesDefault)
	cfg.PollInterval = cmp.Or(cfg.PollInterval, PollIntervalDefault)
	cfg.RetryInterval = cmp.Or(cfg.RetryInterval, RetryIntervalDefault)
	cfg.ReplayBatch = min(cmp.Or(cfg.ReplayBatch, ReplayBatchDefault), engine.MaxItemsDefault)
	buf, err := openBuffer(cfg.Dir)
	if err != nil {
		return nil, err
	}
	s := &Service{
		cfg:   cfg,
		eng:   cfg.Engine,
		pool:  cfg.Engine.Pool(),
		log:   cfg.Logger,
		clock: cfg.Clock,
		buf:   buf,
		wake:  make(chan struct{}, 1),
	}
	s.healthy.Store(true)
	if n := buf.count(); n > 0 {
		s.log.Info("maintenance buffer holds messages from an earlier run", "dir", cfg.Dir, "messages", n)
	}
	return s, nil
}

// Start reads the switches once, so the first request sees them, then
// polls them and replays the buffer whenever push maintenance is off.
func (s *Service) Start(ctx context.Context) error {
	if err := s.Refresh(ctx); err != nil {
		return fmt.Errorf("maintenance: %w", err)
	}
	loopCtx, stop := context.WithCancel(context.Background())
	s.stop = stop
	s.wg.Add(2)
	go func() { defer s.wg.Done(); s.pollLoop(loopCtx) }()
	go func() { defer s.wg.Done(); s.replayLoop(loopCtx) }()
	return nil
}

// Stop ends the loops (an unfinished replay resumes at the next start) and
// closes the buffer.
func (s *Service) Stop() {
	if s.stop != nil {
		s.stop()
		s.wg.Wait()
	}
	s.buf.close()
}

// State is this replica's view of maintenance mode.
type State struct {
	Push     bool  // pushes go to the local buffer
	Pop      bool  // pops answer empty
	Buffered int64 // messages in this replica's buffer, not yet replayed
	Healthy  bool  // false after a failed append or replay
}

// State reports the switches as of the last poll or change, and the buffer.
func (s *Service) State() State {
	return State{Push: s.push.Load(), Pop: s.pop.Load(), Buffered: s.buf.count(), Healthy: s.healthy.Load()}
}

// Refresh reads the switches from the database now.
func (s *Service) Refresh(ctx context.Context) error {
	gen := s.gen.Load()
	f, err := readFlags(ctx, s.pool)
	if err != nil {
		return err
	}
	s.applyMu.Lock()
	defer s.applyMu.Unlock()
	if s.gen.Load() == gen {
		s.apply(f)
	}
	return nil
}

// SetPush turns push maintenance on or off for every replica.
func (s *Service) SetPush(ctx context.Context, enabled bool) error {
	return s.set(ctx, pushKey, enabled)
}

// SetPop turns pop maintenance on or off for every replica.
func (s *Service) SetPop(ctx context.Context, enabled bool) error {
	return s.set(ctx, popKey, enabled)
}

func (s *Service) set(ctx context.Context, key string, enabled bool) error {
	if err := writeFlag(ctx, s.pool, key, enabled, s.clock.Now()); err != nil {
		return err
	}
	s.applyMu.Lock()
	defer s.applyMu.Unlock()
	s.gen.Add(1)
	f := flags{push: s.push.Load(), pop: s.pop.Load()}
	if key == pushKey {
		f.push = enabled
	} else {
		f.pop = enabled
	}
	s.apply(f)
	return nil
}

// apply installs f; the caller holds applyMu. Turning push maintenance off
// wakes the replay.
func (s *Service) apply(f flags) {
	wasPush := s.push.Swap(f.push)
	wasPop := s.pop.Swap(f.pop)
	if wasPush != f.push {
		s.log.Info("push maintenance changed", "enabled", f.push, "buffered_messages", s.buf.count())
		if !f.push {
			s.wakeReplay()
		}
	}
	if wasPop != f.pop {
		s.log.Info("pop maintenance changed", "enabled", f.pop)
	}
}

func (s *Service) wakeReplay() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// pollLoop keeps the switches at most PollInterval old. While the database
// is unreachable the last known state stays in force.
func (s *Service) pollLoop(ctx context.Context) {
	t := time.NewTicker(s.cfg.PollInterval)
	defer t.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		pctx, cancel := context.WithTimeout(ctx, max(s.cfg.PollInterval, time.Second))
		err := s.Refresh(pctx)
		cancel()
		switch {
		case err != nil && ctx.Err() != nil:
			return
		case err != nil && !failing:
			s.log.Warn("maintenance: cannot read the switches; keeping the last known state", "error", err)
			failing = true
		case err == nil && failing:
			s.log.Info("maintenance: switches readable again")
			failing = false
		}
	}
}

// replayLoop replays the buffer at start, when push maintenance goes off,
// and again after a failure.
func (s *Service) replayLoop(ctx context.Context) {
	t := time.NewTicker(s.cfg.RetryInterval)
	defer t.Stop()
	for {
		if !s.push.Load() && (s.buf.count() > 0 || s.buf.hasReplaying()) {
			err := s.replay(ctx)
			switch {
			case err == nil:
				s.healthy.Store(true)
			case errors.Is(err, context.Canceled):
				return
			default:
				s.healthy.Store(false)
				s.log.Warn("maintenance: replay failed; will retry", "error", err,
					"buffered_messages", s.buf.count(), "retry_in", s.cfg.RetryInterval)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		case <-t.C:
		}
	}
}

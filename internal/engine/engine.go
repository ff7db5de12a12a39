// Package engine is lethe's segment log on PostgreSQL: appends with group
// commit, pops with per-(partition, group) leases, acks, retries, dead
// letters and transactions. It knows nothing of HTTP.
package engine

import (
	"cmp"
	"context"
	"log/slog"
	"sync"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lethe-mq/lethe/internal/clock"
)

// Defaults for Config.
const (
	MaxPayloadBytesDefault  = 1 << 20 * 4
	MaxItemsDefault         = 10_000
	SegmentMaxFramesDefault = 1000
	SegmentMaxBytesDefault  = 8 << 20
)

// Config tunes an Engine. Zero values take the defaults above.
type Config struct {
	Clock           clock.Clock
	Logger          *slog.Logger
	MaxPayloadBytes int // largest payload of one message
	MaxItems        int // most items in one push request
	// SegmentMaxFrames and SegmentMaxBytes bound how many concurrent pushes
	// group commit folds into one segment; one request is never split.
	SegmentMaxFrames int
	SegmentMaxBytes  int
	// Hooks lets metrics observe the engine without the engine importing
	// them.
	Hooks Hooks
}

// Hooks are optional callbacks for observability.
type Hooks struct {
	Pushed    func(queue string, n int)
	Delivered func(queue, group string, n int)
	Acked     func(queue, group, status string, n int)
}

// Engine is the segment log. It is safe for concurrent use.
type Engine struct {
	pool     *pgxpool.Pool
	clock    clock.Clock
	log      *slog.Logger
	cfg      Config
	catalog  *catalog
	appender *appender
	notifier *notifier

	subsMu sync.Mutex
	subs   map[subKey]cachedSub

	closeOnce sync.Once
	stop      context.CancelFunc
	done      chan struct{}
}

// New returns an Engine on pool, whose schema must be migrated. It starts
// the listener that wakes long polls for pushes made through other replicas;
// Close stops it.
func New(pool *pgxpool.Pool, cfg Config) *Engine {
	cfg.Clock = cmp.Or[clock.Clock](cfg.Clock, clock.Real{})
	cfg.Logger = cmp.Or(cfg.Logger, slog.Default())
	cfg.MaxPayloadBytes = cmp.Or(cfg.MaxPayloadBytes, MaxPayloadBytesDefault)
	cfg.MaxItems = cmp.Or(cfg.MaxItems, MaxItemsDefault)
	cfg.SegmentMaxFrames = cmp.Or(cfg.SegmentMaxFrames, SegmentMaxFramesDefault)
	cfg.SegmentMaxBytes = cmp.Or(cfg.SegmentMaxBytes, SegmentMaxBytesDefault)
	ctx, stop := context.WithCancel(context.Background())
	e := &Engine{
		pool:  pool,
		clock: cfg.Clock,
		log:   cfg.Logger,
		cfg:   cfg,
		stop:  stop,
		done:  make(chan struct{}),
		subs:  map[subKey]cachedSub{},
	}
	e.catalog = newCatalog(pool, cfg.Clock)
	e.notifier = newNotifier(pool, cfg.Logger)
	e.appender = newAppender(e, ctx.Done())
	go func() {
		defer close(e.done)
		e.notifier.listen(ctx)
	}()
	return e
}

// Pool returns the engine's connection pool.
func (e *Engine) Pool() *pgxpool.Pool { return e.pool }

// Clock returns the engine's clock.
func (e *Engine) Clock() clock.Clock { return e.clock }

// Close stops background work. It does not close the pool.
func (e *Engine) Close() {
	e.closeOnce.Do(func() {
		e.stop()
		<-e.done
	})
}

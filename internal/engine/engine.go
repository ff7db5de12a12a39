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
	"github.com/lethe-mq/lethe/internal/seal"
	"github.com/lethe-mq/lethe/internal/tier"
	"github.com/lethe-mq/lethe/internal/validate"
)

// Defaults for Config.
const (
	MaxPayloadBytesDefault  = 1 << 20 * 4
	MaxItemsDefault         = validate.PushItemsMax
	SegmentMaxFramesDefault = 1000
	SegmentMaxBytesDefault  = 8 << 20
	PopMaxBytesDefault      = 16 << 20
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
	// PopMaxBytes bounds the payloads of one pop's answer, and so what a
	// pop reads and holds (POP_MAX_BYTES): it stops adding messages once
	// theirs reach it, after the first.
	PopMaxBytes int64
	// DefaultRetentionTier and DefaultQuarantined are what a new queue
	// gets when it does not say (LETHE_DEFAULT_RETENTION_TIER,
	// LETHE_DEFAULT_QUARANTINED; empty: forever and keep).
	DefaultRetentionTier string
	DefaultQuarantined   string
	// Keys seal the payloads of queues with encryptionEnabled and open
	// them again (QUEEN_ENCRYPTION_KEY); nil holds none, and then pushes to
	// such queues are refused.
	Keys *seal.Keys
	// Hooks lets metrics observe the engine without the engine importing
	// them.
	Hooks Hooks
	// TestSignals lets tests wait for background work instead of sleeping.
	TestSignals TestSignals
}

// Hooks are optional callbacks for observability. They are called only
// after the transaction that caused them committed (see effects.go).
type Hooks struct {
	// Pushed counts messages appended, transactional pushes and dead
	// letter replays included.
	Pushed    func(queue string, n int)
	Delivered func(queue, group string, n int)
	Acked     func(queue, group, status string, n int)
	// Unreadable counts stored messages that could not be served (a
	// damaged frame, a payload that is not JSON): a pop dead-letters them,
	// a browse skips them.
	Unreadable func(queue string, n int)
	// Expired counts messages a group passed without delivery because
	// they outlived the queue's ttl.
	Expired func(queue, group string, n int)
	// Gap counts messages a pop told group it lost unread: retention
	// deleted them before it consumed them.
	Gap func(queue, group string, n int)
	// PartitionFailed counts a partition skipped because its stored state
	// could not be served; op is "pop", "ack" or "browse".
	PartitionFailed func(queue, op string)
	// CommitGroup observes one commit of the appender: how many
	// partitions' segments it wrote together (a group whose transaction
	// failed counts as the commits of its segments written alone).
	CommitGroup func(partitions int)
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
	work     *workLists

	subsMu sync.Mutex
	subs   map[subKey]cachedSub

	faultLog logThrottle

	closeOnce sync.Once
	stop      context.CancelFunc
	// bg counts every goroutine the engine started; Close waits for them.
	bg sync.WaitGroup
}

// New returns an Engine on pool, whose schema must be migrated. It starts
// the listener that wakes long polls for pushes made through other
// replicas; Close stops it.
func New(pool *pgxpool.Pool, cfg Config) *Engine {
	cfg.Clock = cmp.Or[clock.Clock](cfg.Clock, clock.Real{})
	cfg.Logger = cmp.Or(cfg.Logger, slog.Default())
	cfg.MaxPayloadBytes = cmp.Or(cfg.MaxPayloadBytes, MaxPayloadBytesDefault)
	cfg.MaxItems = cmp.Or(cfg.MaxItems, MaxItemsDefault)
	cfg.SegmentMaxFrames = cmp.Or(cfg.SegmentMaxFrames, SegmentMaxFramesDefault)
	cfg.SegmentMaxBytes = cmp.Or(cfg.SegmentMaxBytes, SegmentMaxBytesDefault)
	cfg.PopMaxBytes = cmp.Or(cfg.PopMaxBytes, PopMaxBytesDefault)
	cfg.DefaultRetentionTier = cmp.Or(cfg.DefaultRetentionTier, string(tier.Forever))
	cfg.DefaultQuarantined = cmp.Or(cfg.DefaultQuarantined, string(tier.Keep))
	ctx, stop := context.WithCancel(context.Background())
	e := &Engine{
		pool:  pool,
		clock: cfg.Clock,
		log:   cfg.Logger,
		cfg:   cfg,
		stop:  stop,
		subs:  map[subKey]cachedSub{},
	}
	e.catalog = newCatalog(pool, cfg.Clock, cfg.DefaultRetentionTier, cfg.DefaultQuarantined)
	e.work = newWorkLists()
	e.notifier = newNotifier(pool, cfg.Logger, cfg.TestSignals.Woken.Signal)
	e.appender = newAppender(e)
	e.goBackground(func() { e.notifier.listen(ctx) })
	e.goBackground(func() { e.notifier.sendLoop(ctx) })
	return e
}

// goBackground runs fn in a goroutine Close waits for.
func (e *Engine) goBackground(fn func()) {
	e.bg.Add(1)
	go func() {
		defer e.bg.Done()
		fn()
	}()
}

// Pool returns the engine's connection pool.
func (e *Engine) Pool() *pgxpool.Pool { return e.pool }

// Clock returns the engine's clock.
func (e *Engine) Clock() clock.Clock { return e.clock }

// Logger returns the engine's logger, for the packages that work beside
// the log (queue configuration).
func (e *Engine) Logger() *slog.Logger { return e.log }

// QueueDefaults are the server's retentionTier and quarantined for a new
// queue (the first push creates one with them; a configure starts from
// them).
func (e *Engine) QueueDefaults() (retentionTier, quarantined string) {
	return e.cfg.DefaultRetentionTier, e.cfg.DefaultQuarantined
}

// Close stops background work and waits for every goroutine the engine
// started: pushes waiting in group commit are written first; pushes after
// Close fail. It does not close the pool.
func (e *Engine) Close() {
	e.closeOnce.Do(func() {
		e.appender.close()
		e.stop()
		e.bg.Wait()
	})
}

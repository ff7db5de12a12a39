package retention

import (
	"cmp"
	"log/slog"
	"time"

	"github.com/lethe-mq/lethe/internal/clock"
)

// Defaults for Config. internal/config's test checks that the
// environment's defaults are these.
const (
	IntervalDefault                   = 5 * time.Second
	BatchSizeDefault                  = 1000
	LockIDDefault               int64 = 737001
	MetricsRetentionDaysDefault       = 90
	DLQRetentionDaysDefault           = Never
	PartitionCleanupDaysDefault       = 30
	// TierIntervalDefault spaces the tier check (RETENTION_TIER_INTERVAL).
	TierIntervalDefault = time.Hour
	// MaxBusyDefault lets the loop work half the time: it rests after
	// each step as long as the step took.
	MaxBusyDefault = 0.5
	// StepTimeoutDefault bounds one step call; a step handles at most
	// BatchSize rows, so hitting it means the database is in trouble.
	StepTimeoutDefault = time.Minute
	// ConnectTimeoutDefault bounds opening the loop's connection.
	ConnectTimeoutDefault = 10 * time.Second
	// PartitionCleanupEvery spaces the partition cleanup phase.
	PartitionCleanupEvery = time.Minute
	// PreviewLimitDefault bounds the segments a dry run walks per partition.
	PreviewLimitDefault = 100_000
)

// Never, as a number of days, turns an age-out off: nothing is purged.
const Never = -1

// Config tunes a Service. Zero values take the defaults above; the
// booleans' zero values mean what they say.
type Config struct {
	Clock  clock.Clock
	Logger *slog.Logger
	// Interval is the time between cycles (RETENTION_INTERVAL).
	Interval time.Duration
	// BatchSize is the most rows one step touches (RETENTION_BATCH_SIZE).
	BatchSize int
	// TierInterval spaces the tier check across replicas
	// (RETENTION_TIER_INTERVAL).
	TierInterval time.Duration
	// LockID is the session advisory lock that elects the sweeping replica.
	LockID int64
	// MaxBusy is the share of time the loop may spend in steps
	// (RETENTION_MAX_BUSY, in (0, 1]): after a step that took d it rests
	// d*(1-MaxBusy)/MaxBusy before the next. 1 never rests.
	MaxBusy float64
	// MetricsRetentionDays ages out the retention history and cycle
	// records; Never keeps them.
	MetricsRetentionDays int
	// DLQRetentionDays ages out dead letters; Never (the default) keeps
	// them.
	DLQRetentionDays int
	// PartitionCleanupDays is how long a partition must be empty and idle
	// before it is deleted.
	PartitionCleanupDays int
	// KeepPartitions turns partition cleanup off
	// (LETHE_PARTITION_CLEANUP_ENABLED=false).
	KeepPartitions bool
	StepTimeout    time.Duration
	ConnectTimeout time.Duration
	PreviewLimit   int
	// Forget is told the queues whose partitions were deleted, so the
	// engine drops the ids it cached (engine.Engine.Forget).
	Forget func(queue string)
	// Reclaimers are the rules of the reclaim phase (streams' state,
	// traces): tables outside the segment log.
	Reclaimers []Reclaimer
	// TestSignals lets tests wait for the loop instead of sleeping.
	TestSignals TestSignals
}

func (c Config) withDefaults() Config {
	c.Clock = cmp.Or[clock.Clock](c.Clock, clock.Real{})
	c.Logger = cmp.Or(c.Logger, slog.Default())
	c.Interval = cmp.Or(c.Interval, IntervalDefault)
	c.BatchSize = cmp.Or(c.BatchSize, BatchSizeDefault)
	c.TierInterval = cmp.Or(c.TierInterval, TierIntervalDefault)
	c.LockID = cmp.Or(c.LockID, LockIDDefault)
	c.MaxBusy = cmp.Or(c.MaxBusy, MaxBusyDefault)
	c.MetricsRetentionDays = cmp.Or(c.MetricsRetentionDays, MetricsRetentionDaysDefault)
	c.DLQRetentionDays = cmp.Or(c.DLQRetentionDays, DLQRetentionDaysDefault)
	c.PartitionCleanupDays = cmp.Or(c.PartitionCleanupDays, PartitionCleanupDaysDefault)
	c.StepTimeout = cmp.Or(c.StepTimeout, StepTimeoutDefault)
	c.ConnectTimeout = cmp.Or(c.ConnectTimeout, ConnectTimeoutDefault)
	c.PreviewLimit = cmp.Or(c.PreviewLimit, PreviewLimitDefault)
	return c
}

// daysBefore is the cutoff days calendar days before now, by calendar
// arithmetic: a time.Duration of days overflows past about 106,000 days
// and put the cutoff in the future, which purged everything. ok is false
// for Never, and for a count so large that nothing stored can be older.
func daysBefore(now time.Time, days int) (cutoff time.Time, ok bool) {
	if days <= 0 {
		return time.Time{}, false
	}
	cutoff = now.AddDate(0, 0, -days)
	if !cutoff.Before(now) || cutoff.Year() < 1 {
		return time.Time{}, false
	}
	return cutoff, true
}

package retention

import (
	"cmp"
	"log/slog"
	"time"

	"github.com/lethe-mq/lethe/internal/clock"
)

// Defaults for Config (seed 000's values).
const (
	IntervalDefault                   = 5 * time.Second
	BatchSizeDefault                  = 1000
	LockIDDefault               int64 = 737001
	MetricsRetentionDaysDefault       = 90
	PartitionCleanupDaysDefault       = 30
	// StepTimeoutDefault bounds one step call; a step handles at most
	// BatchSize rows, so hitting it means the database is in trouble.
	StepTimeoutDefault = time.Minute
	// PartitionCleanupEvery spaces the partition cleanup phase.
	PartitionCleanupEvery = time.Minute
	// PreviewLimitDefault bounds the segments a dry run walks per partition.
	PreviewLimitDefault = 100_000
)

// Config tunes a Service. Zero values take the defaults above, except the
// booleans and DLQRetentionDays, whose zero values mean what they say.
type Config struct {
	Clock  clock.Clock
	Logger *slog.Logger
	// Interval is the time between cycles (RETENTION_INTERVAL).
	Interval time.Duration
	// BatchSize is the most rows one step touches (RETENTION_BATCH_SIZE).
	BatchSize int
	// LockID is the session advisory lock that elects the sweeping replica.
	LockID int64
	// MetricsRetentionDays ages out the retention history and cycle records.
	MetricsRetentionDays int
	// DLQRetentionDays ages out dead letters; 0 keeps them forever.
	DLQRetentionDays int
	// PartitionCleanupDays is how long a partition must be empty and idle
	// before it is deleted.
	PartitionCleanupDays int
	// KeepPartitions turns partition cleanup off
	// (LETHE_PARTITION_CLEANUP_ENABLED=false).
	KeepPartitions bool
	StepTimeout    time.Duration
	PreviewLimit   int
	// Forget is told the queues whose partitions were deleted, so the
	// engine drops the ids it cached (engine.Engine.Forget).
	Forget func(queue string)
	// TestSignals lets tests wait for the loop instead of sleeping.
	TestSignals TestSignals
}

func (c Config) withDefaults() Config {
	c.Clock = cmp.Or[clock.Clock](c.Clock, clock.Real{})
	c.Logger = cmp.Or(c.Logger, slog.Default())
	c.Interval = cmp.Or(c.Interval, IntervalDefault)
	c.BatchSize = cmp.Or(c.BatchSize, BatchSizeDefault)
	c.LockID = cmp.Or(c.LockID, LockIDDefault)
	c.MetricsRetentionDays = cmp.Or(c.MetricsRetentionDays, MetricsRetentionDaysDefault)
	c.PartitionCleanupDays = cmp.Or(c.PartitionCleanupDays, PartitionCleanupDaysDefault)
	c.StepTimeout = cmp.Or(c.StepTimeout, StepTimeoutDefault)
	c.PreviewLimit = cmp.Or(c.PreviewLimit, PreviewLimitDefault)
	return c
}

package retention

import (
	"fmt"
	"time"
)

// Rules as they are named in the history, the metrics and the API.
const (
	RuleRetention          = "retention"
	RuleCompletedRetention = "completed_retention"
	RuleMaxWait            = "max_wait"
	RulePartitionCleanup   = "partition_cleanup"
)

// Phases as the test hook and the logs name them.
const (
	PhaseRetention = "retention"
	PhaseTxns      = "txns"
	PhaseEviction  = "eviction"
	PhaseMetrics   = "metrics"
	PhaseCleanup   = "cleanup"
)

// Amount is what a rule deleted.
type Amount struct {
	Segments int64 `json:"segments"`
	Frames   int64 `json:"frames"`
	Bytes    int64 `json:"bytes"`
}

func (a *Amount) add(b Amount) {
	a.Segments += b.Segments
	a.Frames += b.Frames
	a.Bytes += b.Bytes
}

// CycleResult is what one cycle did.
type CycleResult struct {
	// StartedAt is the cycle's now: every cutoff was computed from it.
	StartedAt time.Time
	// Skipped is true when another replica held the lock.
	Skipped bool
	// Queues and Partitions are the size of the work list.
	Queues     int
	Partitions int
	// Retention, CompletedRetention and MaxWait are what each rule deleted.
	Retention          Amount
	CompletedRetention Amount
	MaxWait            Amount
	TxnsPurged         int64
	// CleanupRan says the partition cleanup phase was due this cycle.
	CleanupRan           bool
	PartitionsDeleted    int
	SubscriptionsDeleted int
	// MetricsPurged counts history, cycle records and dead letters aged
	// out; MetricsPurgeErr is a failure there, logged and swallowed.
	MetricsPurged     int64
	DeadLettersPurged int64
	MetricsPurgeErr   error
	Elapsed           time.Duration
}

// Total is what the retention and eviction rules deleted together.
func (r CycleResult) Total() Amount {
	t := r.Retention
	t.add(r.CompletedRetention)
	t.add(r.MaxWait)
	return t
}

// DeletedAnything reports whether the cycle deleted any row.
func (r CycleResult) DeletedAnything() bool {
	return r.Total().Segments > 0 || r.TxnsPurged > 0 || r.PartitionsDeleted > 0 ||
		r.SubscriptionsDeleted > 0 || r.MetricsPurged > 0
}

func (r *CycleResult) amount(rule string) *Amount {
	switch rule {
	case RuleRetention:
		return &r.Retention
	case RuleCompletedRetention:
		return &r.CompletedRetention
	case RuleMaxWait:
		return &r.MaxWait
	}
	return nil
}

// summary is the cycle's log line, worded as seed 000 shows it.
func (r CycleResult) summary() string {
	purge := fmt.Sprint(r.MetricsPurged)
	if r.MetricsPurgeErr != nil {
		purge += "(failed)"
	}
	return fmt.Sprintf("retention swept queues=%d segments_deleted=%d txns_purged=%d max_wait_evicted=%d partitions_deleted=%d metrics_purge=%s elapsed_ms=%d",
		r.Queues, r.Retention.Segments+r.CompletedRetention.Segments, r.TxnsPurged, r.MaxWait.Segments,
		r.PartitionsDeleted, purge, r.Elapsed.Milliseconds())
}

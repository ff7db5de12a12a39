package retention

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/store"
)

// Phases as the test hook and the logs name them.
const (
	PhaseWorklist  = "worklist"
	PhaseRetention = "retention"
	PhaseTxns      = "txns"
	PhaseEviction  = "eviction"
	PhaseMetrics   = "metrics"
	PhaseCleanup   = "cleanup"
	PhaseChanges   = "changes"
	PhaseTiers     = "tiers"
)

// Amount is what a rule deleted.
type Amount struct {
	Segments int64 `json:"segments"`
	Frames   int64 `json:"frames"`
	Bytes    int64 `json:"bytes"`
}

// api is a as the HTTP API answers it.
func (a Amount) api() api.RetentionAmount {
	return api.RetentionAmount{Segments: a.Segments, Frames: a.Frames, Bytes: a.Bytes}
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
	// Queues and Partitions count what the work list covered;
	// PartitionsDue those that had something to do.
	Queues        int
	Partitions    int
	PartitionsDue int
	// HeadsRead counts the partitions whose head segment the work list
	// read: every partition of a queue with a deleting rule, of the
	// others those whose low watermark moved since the last work list.
	HeadsRead int
	// Retention, CompletedRetention and MaxWait are what each rule deleted.
	Retention          Amount
	CompletedRetention Amount
	MaxWait            Amount
	// TxnsPurged counts the hashes of the sidecar day leaves dropped.
	TxnsPurged int64
	// TierDrop and HeldDrop are what went with dropped tier leaves and
	// held months, TierChange what tier changes deleted; TierMove and
	// HeldMove what moved into a queue's tier or to the held area.
	TierDrop   Amount
	HeldDrop   Amount
	TierChange Amount
	TierMove   Amount
	HeldMove   Amount
	// TierCheckRan says the tier check ran this cycle; LeavesDropped
	// counts the leaves it dropped (sidecar days included).
	TierCheckRan     bool
	LeavesDropped    int
	QuarantinePurged int64
	ChangesFinished  int
	// CleanupRan says the partition cleanup phase was due this cycle.
	CleanupRan           bool
	PartitionsDeleted    int
	SubscriptionsDeleted int
	// MetricsPurged counts history, cycle records and dead letters aged
	// out; MetricsPurgeErr is a failure there, logged and swallowed.
	MetricsPurged     int64
	DeadLettersPurged int64
	MetricsPurgeErr   error
	// Reclaimed counts the rows each reclaim rule deleted.
	Reclaimed map[string]int64
	// Failures are the steps that failed while the cycle went on.
	Failures []StepFailure
	Elapsed  time.Duration
	// LeafDrops says what each dropped leaf held and cost, in drop order
	// (LeavesDropped counts them).
	LeafDrops []LeafDrop
	// SettleWork is the time the settle steps (tier check and tier
	// changes: moves into a tier and to the held area) worked, the duty
	// cycle's rests excluded.
	SettleWork time.Duration
}

// StepFailure is a step that failed: the phase, the partition (empty for
// a phase-wide step such as the work list) and the error.
type StepFailure struct {
	Phase     string
	Queue     string
	Partition string
	Err       error
}

func (f StepFailure) Error() string {
	if f.Queue == "" {
		return fmt.Sprintf("%s: %v", f.Phase, f.Err)
	}
	return fmt.Sprintf("%s on %s/%s: %v", f.Phase, f.Queue, f.Partition, f.Err)
}

func (f StepFailure) Unwrap() error { return f.Err }

// maxRecordedFailures bounds the error text kept in lethe.retention_runs.
const maxRecordedFailures = 10

// errorText is what lethe.retention_runs keeps of a cycle's failures:
// the error that stopped it and the first failed steps; nil when none.
func (r CycleResult) errorText(stopped error) *string {
	var parts []string
	if stopped != nil {
		parts = append(parts, "stopped: "+stopped.Error())
	}
	for i, f := range r.Failures {
		if i == maxRecordedFailures {
			parts = append(parts, fmt.Sprintf("and %d more failed steps", len(r.Failures)-i))
			break
		}
		parts = append(parts, f.Error())
	}
	if len(parts) == 0 {
		return nil
	}
	t := strings.Join(parts, "; ")
	return &t
}

// Err joins the cycle's failed steps; nil when none failed.
func (r CycleResult) Err() error {
	errs := make([]error, len(r.Failures))
	for i, f := range r.Failures {
		errs[i] = f
	}
	return errors.Join(errs...)
}

// Total is what the retention and eviction rules deleted together.
func (r CycleResult) Total() Amount {
	t := r.Retention
	for _, a := range []Amount{r.CompletedRetention, r.MaxWait, r.TierDrop, r.HeldDrop, r.TierChange} {
		t.add(a)
	}
	return t
}

// DeletedAnything reports whether the cycle deleted any row.
func (r CycleResult) DeletedAnything() bool {
	return r.Total().Segments > 0 || r.TxnsPurged > 0 || r.PartitionsDeleted > 0 ||
		r.SubscriptionsDeleted > 0 || r.MetricsPurged > 0 || r.LeavesDropped > 0 || r.QuarantinePurged > 0 ||
		r.TierMove.Segments > 0 || r.HeldMove.Segments > 0 || r.ChangesFinished > 0 || len(r.Reclaimed) > 0
}

func (r *CycleResult) amount(rule string) *Amount {
	switch rule {
	case RuleRetention:
		return &r.Retention
	case RuleCompletedRetention:
		return &r.CompletedRetention
	case RuleMaxWait:
		return &r.MaxWait
	case RuleTierDrop:
		return &r.TierDrop
	case RuleHeldDrop:
		return &r.HeldDrop
	case RuleTierChange:
		return &r.TierChange
	case RuleTierMove:
		return &r.TierMove
	case RuleHeldMove:
		return &r.HeldMove
	}
	return nil
}

// addSettled adds what a settle step did.
func (r *CycleResult) addSettled(st store.Settled) {
	for rule, m := range st.ByRule {
		if a := r.amount(rule); a != nil {
			a.add(Amount{Segments: m.Segments, Frames: m.Frames, Bytes: m.Bytes})
		}
	}
}

// summary is the cycle's log line, worded as docs/retention.md shows it.
func (r CycleResult) summary() string {
	purge := fmt.Sprint(r.MetricsPurged)
	if r.MetricsPurgeErr != nil {
		purge += "(failed)"
	}
	line := fmt.Sprintf("retention swept queues=%d segments_deleted=%d txns_purged=%d max_wait_evicted=%d partitions_deleted=%d metrics_purge=%s elapsed_ms=%d",
		r.Queues, r.Retention.Segments+r.CompletedRetention.Segments, r.TxnsPurged, r.MaxWait.Segments,
		r.PartitionsDeleted, purge, r.Elapsed.Milliseconds())
	if r.TierCheckRan || r.TierMove.Segments+r.HeldMove.Segments+r.TierChange.Segments > 0 {
		line += fmt.Sprintf(" tier_dropped_frames=%d held_dropped_frames=%d held_moved_frames=%d tier_moved_frames=%d tier_change_deleted_frames=%d leaves_dropped=%d quarantine_purged=%d",
			r.TierDrop.Frames, r.HeldDrop.Frames, r.HeldMove.Frames, r.TierMove.Frames, r.TierChange.Frames,
			r.LeavesDropped, r.QuarantinePurged)
	}
	for _, rule := range slices.Sorted(maps.Keys(r.Reclaimed)) {
		line += fmt.Sprintf(" %s=%d", rule, r.Reclaimed[rule])
	}
	if len(r.Failures) > 0 {
		line += fmt.Sprintf(" failed_steps=%d", len(r.Failures))
	}
	return line
}

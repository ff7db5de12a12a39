package api

import "time"

// Retention rules as the history, the metrics and the API name them.
const (
	RuleRetention          = "retention"
	RuleCompletedRetention = "completed_retention"
	RuleMaxWait            = "max_wait"
	RulePartitionCleanup   = "partition_cleanup"
	RuleTierDrop           = "tier_drop"
	RuleHeldDrop           = "held_drop"
	RuleTierChange         = "tier_change"
	RuleHeldMove           = "held_move"
	RuleTierMove           = "tier_move"
	RuleQuarantinePurge    = "quarantine_purge"
)

// HistoryRules are the rules the retention history records, each a value
// of GET /api/v1/retention/history?rule=.
var HistoryRules = []string{RuleRetention, RuleCompletedRetention, RuleMaxWait, RulePartitionCleanup,
	RuleTierDrop, RuleHeldDrop, RuleTierChange, RuleHeldMove, RuleTierMove, RuleQuarantinePurge}

// RetentionStatus is GET /api/v1/retention/status: the retention plan of
// every queue (or one) at one instant.
type RetentionStatus struct {
	At     time.Time              `json:"at"`
	Queues []RetentionQueueStatus `json:"queues"`
}

// RetentionQueueStatus is one queue's rules, footprint and the next
// cycle's work.
type RetentionQueueStatus struct {
	Queue   string           `json:"queue"`
	Rules   RetentionRules   `json:"rules"`
	Cutoffs RetentionCutoffs `json:"cutoffs"`
	// Holds are the queue's active retention holds: while any stands,
	// every cutoff is null and nothing of the queue is deleted.
	Holds []int64 `json:"holds"`
	// Partitions, segments, retained offsets (next offset minus low
	// watermark) and frame bytes stored.
	Partitions int   `json:"partitions"`
	Segments   int64 `json:"segments"`
	Messages   int64 `json:"messages"`
	Bytes      int64 `json:"bytes"`
	// OldestMessageAt is the first frame of the oldest retained segment.
	OldestMessageAt  *time.Time `json:"oldestMessageAt"`
	OldestAgeSeconds float64    `json:"oldestAgeSeconds"`
	WindowLagSeconds float64    `json:"windowLagSeconds"`
	// Hashes is the size of the transaction-id sidecar.
	Hashes int64 `json:"hashes"`
	// EmptyPartitions hold no message (cleanup candidates once idle).
	EmptyPartitions int           `json:"emptyPartitions"`
	NextCycle       RetentionPlan `json:"nextCycle"`
}

// RetentionRules are a queue's retention options as configured.
type RetentionRules struct {
	RetentionEnabled          bool `json:"retentionEnabled"`
	RetentionSeconds          int  `json:"retentionSeconds"`
	CompletedRetentionSeconds int  `json:"completedRetentionSeconds"`
	MaxWaitTimeSeconds        int  `json:"maxWaitTimeSeconds"`
	DedupWindowSeconds        int  `json:"dedupWindowSeconds"`
}

// RetentionCutoffs are the times before which each rule deletes; nil: the
// rule is off.
type RetentionCutoffs struct {
	Retention          *time.Time `json:"retention"`
	CompletedRetention *time.Time `json:"completedRetention"`
	MaxWait            *time.Time `json:"maxWait"`
	Hashes             time.Time  `json:"hashes"`
}

// RetentionPlan is what the next cycle would delete if it ran now: a dry
// run of the same walk, deleting nothing.
type RetentionPlan struct {
	Retention          RetentionAmount `json:"retention"`
	CompletedRetention RetentionAmount `json:"completedRetention"`
	MaxWait            RetentionAmount `json:"maxWait"`
	Hashes             int64           `json:"hashes"`
	// Partitions empty and idle long enough to be deleted by the cleanup
	// phase.
	Partitions int `json:"partitions"`
	// Truncated says a partition's walk stopped at its segment limit: the
	// figures are a lower bound.
	Truncated bool `json:"truncated"`
}

// RetentionAmount is what a rule deleted or would delete.
type RetentionAmount struct {
	Segments int64 `json:"segments"`
	Frames   int64 `json:"frames"`
	Bytes    int64 `json:"bytes"`
}

// RetentionHistory is GET /api/v1/retention/history: audit rows, newest
// first.
type RetentionHistory struct {
	TimeRange TimeRange               `json:"timeRange"`
	Entries   []RetentionHistoryEntry `json:"entries"`
}

// TimeRange is the window an answer covers.
type TimeRange struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
}

// RetentionHistoryEntry is one decision's audit row: what one rule
// deleted (or moved) in one queue in one retention cycle, over every
// partition it touched. Partition, PartitionID, FromOffset and ToOffset
// name the partition and its range when the row covers one partition
// (Partitions 1); with several they are empty and null, and Ranges lists
// the first of them. Rows written before lethe's migration 110 cover one
// step of one partition each.
type RetentionHistoryEntry struct {
	ID          int64            `json:"id"`
	ExecutedAt  time.Time        `json:"executedAt"`
	Queue       string           `json:"queue"`
	Partition   string           `json:"partition"`
	PartitionID string           `json:"partitionId"`
	Rule        string           `json:"rule"`
	Partitions  int              `json:"partitions"`
	Segments    int              `json:"segments"`
	Messages    int64            `json:"messages"`
	Bytes       int64            `json:"bytes"`
	FromOffset  *int64           `json:"fromOffset"`
	ToOffset    *int64           `json:"toOffset"`
	Ranges      []PartitionRange `json:"ranges"`
	Lost        []GroupLoss      `json:"lost"`
}

// PartitionRange is what a history row covered of one partition: offsets
// FromOffset to ToOffset, Messages of them.
type PartitionRange struct {
	Partition  string `json:"partition"`
	FromOffset *int64 `json:"fromOffset"`
	ToOffset   *int64 `json:"toOffset"`
	Messages   int64  `json:"messages"`
}

// GroupLoss is what one consumer group had not consumed of the deleted
// offsets: Messages over Partitions partitions, Leased of which it held
// under a live lease (both exact). FromOffset and ToOffset are the range
// when the loss is in one partition, null with several (see Ranges).
// Queue mode is the group "__QUEUE_MODE__".
type GroupLoss struct {
	Group      string           `json:"group"`
	Messages   int64            `json:"messages"`
	Partitions int              `json:"partitions"`
	FromOffset *int64           `json:"fromOffset"`
	ToOffset   *int64           `json:"toOffset"`
	Leased     int64            `json:"leased"`
	Ranges     []PartitionRange `json:"ranges"`
}

// RetentionHold is an operator's hold on a queue: while it is active
// (ReleasedAt null) nothing of the queue is deleted (GET/POST
// /api/v1/retention/holds, DELETE /api/v1/retention/holds/{id}).
type RetentionHold struct {
	ID         int64      `json:"id"`
	Queue      string     `json:"queue"`
	Reason     string     `json:"reason"`
	PlacedAt   time.Time  `json:"placedAt"`
	PlacedBy   string     `json:"placedBy"`
	ReleasedAt *time.Time `json:"releasedAt"`
	ReleasedBy *string    `json:"releasedBy"`
	Active     bool       `json:"active"`
}

// PlaceHoldRequest is the body of POST /api/v1/retention/holds.
type PlaceHoldRequest struct {
	Queue  string `json:"queue"`
	Reason string `json:"reason"`
}

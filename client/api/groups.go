package api

import "time"

// Consumer group states, by the age of the oldest unconsumed message.
const (
	GroupStable  = "Stable"
	GroupLagging = "Lagging"
	GroupDead    = "Dead"
)

// GroupStats are a consumer group's figures on one queue.
type GroupStats struct {
	// Members counts the partitions the group has started on.
	Members           int        `json:"members"`
	PartitionsWithLag int        `json:"partitionsWithLag"`
	TotalLag          int64      `json:"totalLag"`
	MaxTimeLag        int64      `json:"maxTimeLag"`
	LeasesHeld        int        `json:"leasesHeld"`
	State             string     `json:"state"`
	SubscriptionMode  *string    `json:"subscriptionMode"`
	SubscriptionFrom  *time.Time `json:"subscriptionTimestamp"`
	SubscribedAt      *time.Time `json:"subscriptionCreatedAt"`
	LastConsumedAt    *time.Time `json:"lastConsumedAt"`
	TimeToLoss
}

// TimeToLoss says when a group starts losing messages it has not read: the
// first cycle after LossAt, when the queue's rule (LossRule,
// "retentionSeconds" or "maxWaitTimeSeconds") deletes the segment of its
// oldest unread message. LossRule is null when no rule of the queue deletes
// unread data; LossAt and TimeToLossSeconds are null when the group has
// nothing unread there too. TimeToLossSeconds is 0 once LossAt has passed.
// Over several partitions, the soonest.
type TimeToLoss struct {
	LossRule          *string    `json:"lossRule"`
	LossAt            *time.Time `json:"lossAt"`
	TimeToLossSeconds *int64     `json:"timeToLossSeconds"`
}

// GroupSummary is one (group, queue) entry of GET /api/v1/consumer-groups,
// in Queen's shape plus lethe's figures. The list is a bare JSON array; the
// number of entries in all is in the X-Total-Count header.
type GroupSummary struct {
	Name       string   `json:"name"`
	Topics     []string `json:"topics"`
	QueueName  string   `json:"queueName"`
	Partitions int      `json:"partitions"`
	GroupStats
}

// GroupQueue is a group's detail on one queue: GET
// /api/v1/consumer-groups/{group} answers a map of them keyed by queue.
type GroupQueue struct {
	PartitionCount int `json:"partitionCount"`
	GroupStats
	Partitions []GroupPartition `json:"partitions"`
}

// GroupPartition is where a group stands on one partition.
type GroupPartition struct {
	ConsumerGroup string `json:"consumerGroup"`
	Queue         string `json:"queue"`
	Partition     string `json:"partition"`
	PartitionID   string `json:"partitionId"`
	// CommittedOffset is the last offset the group is done with; null when
	// it has not popped this partition yet.
	CommittedOffset    *int64     `json:"committedOffset"`
	NextOffset         int64      `json:"nextOffset"`
	LowWatermark       int64      `json:"lowWatermark"`
	OffsetLag          int64      `json:"offsetLag"`
	TimeLagSeconds     int64      `json:"timeLagSeconds"`
	OldestUnconsumedAt *time.Time `json:"oldestUnconsumedAt"`
	LeaseActive        bool       `json:"leaseActive"`
	LeaseID            string     `json:"leaseId,omitempty"`
	LeaseExpiresAt     *time.Time `json:"leaseExpiresAt,omitempty"`
	LastConsumedAt     *time.Time `json:"lastConsumedAt"`
	TimeToLoss
}

// LaggingPartition is one row of GET /api/v1/consumer-groups/lagging, in
// Queen's snake_case.
type LaggingPartition struct {
	ConsumerGroup      string     `json:"consumer_group"`
	QueueName          string     `json:"queue_name"`
	PartitionName      string     `json:"partition_name"`
	PartitionID        string     `json:"partition_id"`
	OffsetLag          int64      `json:"offset_lag"`
	TimeLagSeconds     int64      `json:"time_lag_seconds"`
	LagHours           float64    `json:"lag_hours"`
	OldestUnconsumedAt *time.Time `json:"oldest_unconsumed_at"`
	LastConsumedAt     *time.Time `json:"last_consumed_at"`
}

// GroupDeleted answers DELETE /api/v1/consumer-groups/{group} (Queen's
// shape).
type GroupDeleted struct {
	Success           bool   `json:"success"`
	ConsumerGroup     string `json:"consumerGroup"`
	QueueName         string `json:"queueName,omitempty"`
	DeletedPartitions int64  `json:"deletedPartitions"`
	MetadataDeleted   bool   `json:"metadataDeleted"`
}

// SubscriptionUpdated answers a subscription time change (Queen's shape).
type SubscriptionUpdated struct {
	Success       bool      `json:"success"`
	ConsumerGroup string    `json:"consumerGroup"`
	NewTimestamp  time.Time `json:"newTimestamp"`
	RowsUpdated   int64     `json:"rowsUpdated"`
}

// SeekResult answers a seek of a group's cursors (Queen's shape).
type SeekResult struct {
	Success           bool       `json:"success"`
	ConsumerGroup     string     `json:"consumerGroup"`
	QueueName         string     `json:"queueName"`
	Partition         string     `json:"partition,omitempty"`
	SeekToEnd         bool       `json:"seekToEnd"`
	TargetTimestamp   *time.Time `json:"targetTimestamp"`
	PartitionsUpdated int        `json:"partitionsUpdated"`
	// CommittedOffset is where a one-partition seek left the cursor.
	CommittedOffset *int64 `json:"committedOffset,omitempty"`
	// ClampedPartitions counts partitions where the target time lies at or
	// before the oldest message still retained, older ones having been
	// deleted by retention: those cursors start at the oldest retained one.
	ClampedPartitions int `json:"clampedPartitions,omitempty"`
}

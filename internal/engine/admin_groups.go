package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// lagStateSeconds is the time lag past which a group counts as Lagging
// (Queen's threshold).
const lagStateSeconds = 300

// groupPartitionsSQL yields one row per (group, queue, partition) for every
// group that has a subscription or a cursor on a queue: where the group
// stands on each partition of that queue, how many messages it has left and
// how old the first of them is. Partitions the group has not popped yet
// count from where its subscription would start it. Parameters: $1 now,
// $2 one group or NULL, $3 queue names or NULL.
//
// The age of the oldest unconsumed message and where a subscription time
// starts come from the storage layer's SQL functions (lethe.store_time_at,
// lethe.store_offset_since: segment granularity, no frame decoding).
const groupPartitionsSQL = `
	WITH members AS (
		SELECT s.queue_id, s.group_name FROM lethe.subscriptions s
		 WHERE $2::text IS NULL OR s.group_name = $2
		UNION
		SELECT p.queue_id, c.group_name FROM lethe.cursors c JOIN lethe.partitions p ON p.id = c.partition_id
		 WHERE $2::text IS NULL OR c.group_name = $2
	), placed AS (
		SELECT m.group_name, q.name AS queue_name, p.id AS partition_id, p.name AS partition_name,
		       p.next_offset, p.low_watermark, c.committed, c.lease_id, c.lease_until, c.last_pop_at,
		       sub.mode, sub.from_at, sub.created_at AS subscribed_at,
		       greatest(p.low_watermark, CASE
		           WHEN c.partition_id IS NOT NULL THEN c.committed + 1
		           WHEN sub.from_at IS NULL THEN 0
		           WHEN p.last_push_at IS NULL OR p.last_push_at < sub.from_at THEN p.next_offset
		           ELSE coalesce(lethe.store_offset_since(p.id, sub.from_at), p.next_offset)
		       END) AS first_unconsumed
		  FROM members m
		  JOIN lethe.queues q ON q.id = m.queue_id
		  LEFT JOIN lethe.partitions p ON p.queue_id = q.id
		  LEFT JOIN lethe.cursors c ON c.partition_id = p.id AND c.group_name = m.group_name
		  LEFT JOIN lethe.subscriptions sub ON sub.queue_id = q.id AND sub.group_name = m.group_name
		 WHERE $3::text[] IS NULL OR q.name = ANY($3)
	), lagged AS (
		SELECT pl.*, greatest(pl.next_offset - pl.first_unconsumed, 0) AS offset_lag,
		       CASE WHEN pl.next_offset > pl.first_unconsumed
		            THEN lethe.store_time_at(pl.partition_id, pl.first_unconsumed) END AS oldest_unconsumed_at
		  FROM placed pl
	)
	SELECT l.*,
	       coalesce(greatest(extract(epoch FROM $1::timestamptz - l.oldest_unconsumed_at), 0)::bigint, 0) AS time_lag_seconds,
	       coalesce(l.lease_id IS NOT NULL AND l.lease_until > $1::timestamptz, false) AS lease_active
	  FROM lagged l`

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
}

// GroupSummary is one (group, queue) entry of the consumer group list, in
// Queen's shape plus lethe's figures.
type GroupSummary struct {
	Name       string   `json:"name"`
	Topics     []string `json:"topics"`
	QueueName  string   `json:"queueName"`
	Partitions int      `json:"partitions"`
	GroupStats
}

// GroupQueue is a group's detail on one queue.
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
}

// LaggingPartition is one row of the lagging report, in Queen's snake_case.
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

// groupAggregateSQL sums groupPartitionsSQL per (group, queue).
const groupAggregateSQL = `
	SELECT gp.group_name, gp.queue_name, count(gp.partition_id)::int,
	       count(gp.committed)::int, count(*) FILTER (WHERE gp.offset_lag > 0)::int,
	       coalesce(sum(gp.offset_lag), 0)::bigint, coalesce(max(gp.time_lag_seconds), 0)::bigint,
	       count(*) FILTER (WHERE gp.lease_active)::int,
	       max(gp.mode), max(gp.from_at), max(gp.subscribed_at), max(gp.last_pop_at)
	  FROM (` + groupPartitionsSQL + `) gp
	 GROUP BY gp.group_name, gp.queue_name`

func scanGroupSummary(r pgx.CollectableRow) (GroupSummary, error) {
	var g GroupSummary
	err := r.Scan(&g.Name, &g.QueueName, &g.Partitions, &g.Members, &g.PartitionsWithLag, &g.TotalLag,
		&g.MaxTimeLag, &g.LeasesHeld, &g.SubscriptionMode, &g.SubscriptionFrom, &g.SubscribedAt, &g.LastConsumedAt)
	g.Topics = []string{g.QueueName}
	g.State = groupState(g.MaxTimeLag, g.LastConsumedAt)
	utcPtr(g.SubscriptionFrom, g.SubscribedAt, g.LastConsumedAt)
	return g, err
}

func groupState(maxTimeLag int64, lastConsumed *time.Time) string {
	switch {
	case maxTimeLag > lagStateSeconds:
		return "Lagging"
	case lastConsumed != nil:
		return "Stable"
	}
	return "Dead"
}

// ConsumerGroups lists every (group, queue) pair with its lag, ordered by
// group then queue, and the number of pairs in all.
func (e *Engine) ConsumerGroups(ctx context.Context, page Page) ([]GroupSummary, int, error) {
	if err := page.validate(); err != nil {
		return nil, 0, err
	}
	return e.groupSummaries(ctx, nil, nil, page)
}

func (e *Engine) groupSummaries(ctx context.Context, group *string, queues []string, page Page) ([]GroupSummary, int, error) {
	var total int
	if err := e.pool.QueryRow(ctx, `
		SELECT count(*) FROM (
			SELECT s.queue_id, s.group_name FROM lethe.subscriptions s JOIN lethe.queues q ON q.id = s.queue_id
			 WHERE ($1::text IS NULL OR s.group_name = $1) AND ($2::text[] IS NULL OR q.name = ANY($2))
			UNION
			SELECT p.queue_id, c.group_name FROM lethe.cursors c JOIN lethe.partitions p ON p.id = c.partition_id
			  JOIN lethe.queues q ON q.id = p.queue_id
			 WHERE ($1::text IS NULL OR c.group_name = $1) AND ($2::text[] IS NULL OR q.name = ANY($2))) m`,
		group, queues).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count consumer groups: %w", err)
	}
	rows, err := e.pool.Query(ctx, groupAggregateSQL+` ORDER BY 1, 2 LIMIT $4 OFFSET $5`,
		e.clock.Now(), group, queues, page.Limit, page.Offset)
	if err != nil {
		return nil, 0, fmt.Errorf("list consumer groups: %w", err)
	}
	out, err := pgx.CollectRows(rows, scanGroupSummary)
	if err != nil {
		return nil, 0, fmt.Errorf("list consumer groups: %w", err)
	}
	return out, total, nil
}

const groupPartitionColumns = `gp.group_name, gp.queue_name, gp.partition_id, gp.partition_name, gp.committed,
	gp.next_offset, gp.low_watermark, gp.offset_lag, gp.time_lag_seconds, gp.oldest_unconsumed_at,
	gp.lease_active, gp.lease_id, gp.lease_until, gp.last_pop_at`

func scanGroupPartition(r pgx.CollectableRow) (GroupPartition, error) {
	var p GroupPartition
	var pid uuid.UUID
	var leaseID *uuid.UUID
	var leaseUntil *time.Time
	err := r.Scan(&p.ConsumerGroup, &p.Queue, &pid, &p.Partition, &p.CommittedOffset, &p.NextOffset, &p.LowWatermark,
		&p.OffsetLag, &p.TimeLagSeconds, &p.OldestUnconsumedAt, &p.LeaseActive, &leaseID, &leaseUntil, &p.LastConsumedAt)
	p.PartitionID = pid.String()
	if p.LeaseActive && leaseID != nil {
		p.LeaseID, p.LeaseExpiresAt = leaseID.String(), leaseUntil
	}
	utcPtr(p.OldestUnconsumedAt, p.LeaseExpiresAt, p.LastConsumedAt)
	return p, err
}

// ConsumerGroup returns a group's standing on each of its queues, keyed by
// queue name (Queen's shape). page selects the partition rows across all
// queues, ordered by queue then partition; the figures of each queue cover
// all its partitions. It also returns how many partition rows there are.
func (e *Engine) ConsumerGroup(ctx context.Context, group string, page Page) (map[string]*GroupQueue, int, error) {
	if err := ValidateName("consumer group", group); err != nil {
		return nil, 0, err
	}
	if err := page.validate(); err != nil {
		return nil, 0, err
	}
	sums, _, err := e.groupSummaries(ctx, &group, nil, Page{Limit: PageLimitMax})
	if err != nil {
		return nil, 0, err
	}
	if len(sums) == 0 {
		return nil, 0, notFoundf("consumer group %q does not exist (no subscription or cursor on any queue)", group)
	}
	out := make(map[string]*GroupQueue, len(sums))
	total := 0
	for _, s := range sums {
		out[s.QueueName] = &GroupQueue{PartitionCount: s.Partitions, GroupStats: s.GroupStats, Partitions: []GroupPartition{}}
		total += s.Partitions
	}
	rows, err := e.pool.Query(ctx, `SELECT `+groupPartitionColumns+` FROM (`+groupPartitionsSQL+`) gp
		 WHERE gp.partition_id IS NOT NULL ORDER BY gp.queue_name, gp.partition_name LIMIT $4 OFFSET $5`,
		e.clock.Now(), group, nil, page.Limit, page.Offset)
	if err != nil {
		return nil, 0, fmt.Errorf("consumer group %s: %w", group, err)
	}
	parts, err := pgx.CollectRows(rows, scanGroupPartition)
	if err != nil {
		return nil, 0, fmt.Errorf("consumer group %s: %w", group, err)
	}
	for _, p := range parts {
		if q := out[p.Queue]; q != nil {
			q.Partitions = append(q.Partitions, p)
		}
	}
	return out, total, nil
}

// LaggingPartitions lists the partitions whose oldest unconsumed message is
// more than minLagSeconds old for some group, oldest first, and how many
// there are.
func (e *Engine) LaggingPartitions(ctx context.Context, minLagSeconds int64, page Page) ([]LaggingPartition, int, error) {
	if minLagSeconds < 0 {
		return nil, 0, invalidf("minLagSeconds must be 0 or more, got %d", minLagSeconds)
	}
	if err := page.validate(); err != nil {
		return nil, 0, err
	}
	now := e.clock.Now()
	var total int
	if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM (`+groupPartitionsSQL+`) gp
		 WHERE gp.partition_id IS NOT NULL AND gp.time_lag_seconds > $4`,
		now, nil, nil, minLagSeconds).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count lagging partitions: %w", err)
	}
	rows, err := e.pool.Query(ctx, `SELECT `+groupPartitionColumns+` FROM (`+groupPartitionsSQL+`) gp
		 WHERE gp.partition_id IS NOT NULL AND gp.time_lag_seconds > $4
		 ORDER BY gp.time_lag_seconds DESC, gp.group_name, gp.queue_name, gp.partition_name
		 LIMIT $5 OFFSET $6`, now, nil, nil, minLagSeconds, page.Limit, page.Offset)
	if err != nil {
		return nil, 0, fmt.Errorf("list lagging partitions: %w", err)
	}
	parts, err := pgx.CollectRows(rows, scanGroupPartition)
	if err != nil {
		return nil, 0, fmt.Errorf("list lagging partitions: %w", err)
	}
	out := make([]LaggingPartition, len(parts))
	for i, p := range parts {
		out[i] = LaggingPartition{ConsumerGroup: p.ConsumerGroup, QueueName: p.Queue, PartitionName: p.Partition,
			PartitionID: p.PartitionID, OffsetLag: p.OffsetLag, TimeLagSeconds: p.TimeLagSeconds,
			LagHours: float64(p.TimeLagSeconds*100/3600) / 100, OldestUnconsumedAt: p.OldestUnconsumedAt,
			LastConsumedAt: p.LastConsumedAt}
	}
	return out, total, nil
}

// utcPtr shows times in UTC whatever the session's time zone.
func utcPtr(ts ...*time.Time) {
	for _, t := range ts {
		if t != nil {
			*t = t.UTC()
		}
	}
}

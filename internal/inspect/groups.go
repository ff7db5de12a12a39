package inspect

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/validate"
)

// lagStateSeconds is the time lag past which a group counts as Lagging
// (Queen's threshold).
const lagStateSeconds = 300

// groupPartitionsSQL yields one row per (group, queue, partition) for every
// group that has a subscription or a cursor on a queue: where the group
// stands on each partition of that queue (lethe.group_lag, the one
// definition of lag, which Prometheus reads too), how many messages it has
// left, how old the first of them is and when it is lost unread.
// Parameters: $1 now, $2 one group or NULL, $3 queue names or NULL.
//
// The age of the oldest unconsumed message comes from the storage layer's
// SQL function lethe.store_time_at (segment granularity, no frame
// decoding); when that message is lost unread from the view
// lethe.group_loss (migration 155), which the gauge reads too.
const groupPartitionsSQL = `
	SELECT l.*,
	       coalesce(greatest(extract(epoch FROM $1::timestamptz - l.oldest_unconsumed_at), 0)::bigint, 0) AS time_lag_seconds,
	       coalesce(l.lease_id IS NOT NULL AND l.lease_until > $1::timestamptz, false) AS lease_active,
	       -- greatest ignores a NULL: without a loss time there is no figure.
	       CASE WHEN l.loss_at IS NOT NULL
	            THEN greatest(ceil(extract(epoch FROM l.loss_at - $1::timestamptz)), 0)::bigint END AS time_to_loss_seconds
	  FROM (SELECT gl.*, CASE WHEN gl.offset_lag > 0
	                          THEN lethe.store_time_at(gl.partition_id, gl.first_unconsumed) END AS oldest_unconsumed_at
	          FROM lethe.group_loss gl
	         WHERE ($2::text IS NULL OR gl.group_name = $2) AND ($3::text[] IS NULL OR gl.queue_name = ANY($3))) l`

// groupAggregateSQL sums groupPartitionsSQL per (group, queue).
const groupAggregateSQL = `
	SELECT gp.group_name, gp.queue_name, count(gp.partition_id)::int,
	       count(gp.committed)::int, count(*) FILTER (WHERE gp.offset_lag > 0)::int,
	       coalesce(sum(gp.offset_lag), 0)::bigint, coalesce(max(gp.time_lag_seconds), 0)::bigint,
	       count(*) FILTER (WHERE gp.lease_active)::int,
	       max(gp.mode), max(gp.from_at), max(gp.subscribed_at), max(gp.last_pop_at),
	       max(gp.loss_rule), min(gp.loss_at), min(gp.time_to_loss_seconds)
	  FROM (` + groupPartitionsSQL + `) gp
	 GROUP BY gp.group_name, gp.queue_name`

func scanGroupSummary(row pgx.CollectableRow) (api.GroupSummary, error) {
	var g api.GroupSummary
	err := row.Scan(&g.Name, &g.QueueName, &g.Partitions, &g.Members, &g.PartitionsWithLag, &g.TotalLag,
		&g.MaxTimeLag, &g.LeasesHeld, &g.SubscriptionMode, &g.SubscriptionFrom, &g.SubscribedAt, &g.LastConsumedAt,
		&g.LossRule, &g.LossAt, &g.TimeToLossSeconds)
	g.Topics = []string{g.QueueName}
	g.State = groupState(g.MaxTimeLag, g.LastConsumedAt)
	utcPtr(g.SubscriptionFrom, g.SubscribedAt, g.LastConsumedAt, g.LossAt)
	return g, err
}

func groupState(maxTimeLag int64, lastConsumed *time.Time) string {
	switch {
	case maxTimeLag > lagStateSeconds:
		return api.GroupLagging
	case lastConsumed != nil:
		return api.GroupStable
	}
	return api.GroupDead
}

// ConsumerGroups lists every (group, queue) pair with its lag, ordered by
// group then queue, and the number of pairs in all.
func (r *Reader) ConsumerGroups(ctx context.Context, page Page) ([]api.GroupSummary, int, error) {
	if err := page.validate(); err != nil {
		return nil, 0, err
	}
	return r.groupSummaries(ctx, nil, nil, page)
}

func (r *Reader) groupSummaries(ctx context.Context, group *string, queues []string, page Page) ([]api.GroupSummary, int, error) {
	var total int
	if err := r.pool.QueryRow(ctx, `
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
	rows, err := r.pool.Query(ctx, groupAggregateSQL+` ORDER BY 1, 2 LIMIT $4 OFFSET $5`,
		r.clock.Now(), group, queues, page.Limit, page.Offset)
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
	gp.lease_active, gp.lease_id, gp.lease_until, gp.last_pop_at, gp.loss_rule, gp.loss_at, gp.time_to_loss_seconds`

func scanGroupPartition(row pgx.CollectableRow) (api.GroupPartition, error) {
	var p api.GroupPartition
	var pid uuid.UUID
	var leaseID *uuid.UUID
	var leaseUntil *time.Time
	err := row.Scan(&p.ConsumerGroup, &p.Queue, &pid, &p.Partition, &p.CommittedOffset, &p.NextOffset, &p.LowWatermark,
		&p.OffsetLag, &p.TimeLagSeconds, &p.OldestUnconsumedAt, &p.LeaseActive, &leaseID, &leaseUntil, &p.LastConsumedAt,
		&p.LossRule, &p.LossAt, &p.TimeToLossSeconds)
	p.PartitionID = pid.String()
	if p.LeaseActive && leaseID != nil {
		p.LeaseID, p.LeaseExpiresAt = leaseID.String(), leaseUntil
	}
	utcPtr(p.OldestUnconsumedAt, p.LeaseExpiresAt, p.LastConsumedAt, p.LossAt)
	return p, err
}

// ConsumerGroup returns a group's standing on each of its queues, keyed by
// queue name (Queen's shape). page selects the partition rows across all
// queues, ordered by queue then partition; the figures of each queue cover
// all its partitions. It also returns how many partition rows there are.
func (r *Reader) ConsumerGroup(ctx context.Context, group string, page Page) (map[string]*api.GroupQueue, int, error) {
	if err := validate.Name("consumer group", group); err != nil {
		return nil, 0, err
	}
	if err := page.validate(); err != nil {
		return nil, 0, err
	}
	sums, _, err := r.groupSummaries(ctx, &group, nil, Page{Limit: PageLimitMax})
	if err != nil {
		return nil, 0, err
	}
	if len(sums) == 0 {
		return nil, 0, notFoundf("consumer group %q does not exist (no subscription or cursor on any queue)", group)
	}
	out := make(map[string]*api.GroupQueue, len(sums))
	total := 0
	for _, s := range sums {
		out[s.QueueName] = &api.GroupQueue{PartitionCount: s.Partitions, GroupStats: s.GroupStats, Partitions: []api.GroupPartition{}}
		total += s.Partitions
	}
	rows, err := r.pool.Query(ctx, `SELECT `+groupPartitionColumns+` FROM (`+groupPartitionsSQL+`) gp
		 WHERE gp.partition_id IS NOT NULL ORDER BY gp.queue_name, gp.partition_name LIMIT $4 OFFSET $5`,
		r.clock.Now(), group, nil, page.Limit, page.Offset)
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
func (r *Reader) LaggingPartitions(ctx context.Context, minLagSeconds int64, page Page) ([]api.LaggingPartition, int, error) {
	if minLagSeconds < 0 {
		return nil, 0, invalidf("minLagSeconds must be 0 or more, got %d", minLagSeconds)
	}
	if err := page.validate(); err != nil {
		return nil, 0, err
	}
	now := r.clock.Now()
	var total int
	if err := r.pool.QueryRow(ctx, `SELECT count(*) FROM (`+groupPartitionsSQL+`) gp
		 WHERE gp.partition_id IS NOT NULL AND gp.time_lag_seconds > $4`,
		now, nil, nil, minLagSeconds).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count lagging partitions: %w", err)
	}
	rows, err := r.pool.Query(ctx, `SELECT `+groupPartitionColumns+` FROM (`+groupPartitionsSQL+`) gp
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
	out := make([]api.LaggingPartition, len(parts))
	for i, p := range parts {
		out[i] = api.LaggingPartition{ConsumerGroup: p.ConsumerGroup, QueueName: p.Queue, PartitionName: p.Partition,
			PartitionID: p.PartitionID, OffsetLag: p.OffsetLag, TimeLagSeconds: p.TimeLagSeconds,
			LagHours: float64(p.TimeLagSeconds*100/3600) / 100, OldestUnconsumedAt: p.OldestUnconsumedAt,
			LastConsumedAt: p.LastConsumedAt}
	}
	return out, total, nil
}

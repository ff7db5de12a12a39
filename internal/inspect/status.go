package inspect

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/client/api"
)

// Overview counts queues, partitions, messages, groups and dead letters.
func (r *Reader) Overview(ctx context.Context) (*api.Overview, error) {
	o := &api.Overview{}
	err := r.pool.QueryRow(ctx, `
		SELECT (SELECT count(*) FROM lethe.queues),
		       (SELECT count(*) FROM lethe.partitions),
		       (SELECT count(DISTINCT namespace) FROM lethe.queues WHERE namespace <> ''),
		       (SELECT count(DISTINCT task) FROM lethe.queues WHERE task <> ''),
		       (SELECT count(*) FROM (SELECT group_name FROM lethe.subscriptions
		                              UNION SELECT group_name FROM lethe.cursors) g),
		       (SELECT count(*) FROM lethe.cursors WHERE lease_id IS NOT NULL AND lease_until > $1),
		       (SELECT coalesce(sum(next_offset - low_watermark), 0)::bigint FROM lethe.partitions),
		       (SELECT count(*) FROM lethe.dead_letters),
		       lethe.store_disk_bytes()`, r.clock.Now()).
		Scan(&o.Queues, &o.Partitions, &o.Namespaces, &o.Tasks, &o.ConsumerGroups, &o.ActiveLeases,
			&o.Messages.Total, &o.DeadLetters, &o.Bytes)
	if err != nil {
		return nil, fmt.Errorf("overview: %w", err)
	}
	o.Messages.DeadLetter = o.DeadLetters
	return o, nil
}

// Namespaces lists the namespaces queues are configured with, and how many
// there are.
func (r *Reader) Namespaces(ctx context.Context, page Page) ([]api.TagSummary, int64, error) {
	return r.tags(ctx, "namespace", page)
}

// Tasks lists the tasks queues are configured with, and how many there are.
func (r *Reader) Tasks(ctx context.Context, page Page) ([]api.TagSummary, int64, error) {
	return r.tags(ctx, "task", page)
}

// tags groups queues by column, which is "namespace" or "task" (never user
// input).
func (r *Reader) tags(ctx context.Context, column string, page Page) ([]api.TagSummary, int64, error) {
	if err := page.validate(); err != nil {
		return nil, 0, err
	}
	var total int64
	if err := r.pool.QueryRow(ctx, `SELECT count(DISTINCT q.`+column+`) FROM lethe.queues q WHERE q.`+column+` <> ''`).
		Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count %ss: %w", column, err)
	}
	rows, err := r.pool.Query(ctx, `
		SELECT q.`+column+`, count(DISTINCT q.id), count(p.id),
		       coalesce(sum(p.next_offset - p.low_watermark), 0)::bigint,
		       (SELECT count(*) FROM lethe.dead_letters d JOIN lethe.partitions p2 ON p2.id = d.partition_id
		          JOIN lethe.queues q2 ON q2.id = p2.queue_id WHERE q2.`+column+` = q.`+column+`)
		  FROM lethe.queues q LEFT JOIN lethe.partitions p ON p.queue_id = q.id
		 WHERE q.`+column+` <> ''
		 GROUP BY q.`+column+` ORDER BY q.`+column+` LIMIT $1 OFFSET $2`, page.Limit, page.Offset)
	if err != nil {
		return nil, 0, fmt.Errorf("list %ss: %w", column, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (api.TagSummary, error) {
		var t api.TagSummary
		var name string
		err := row.Scan(&name, &t.Queues, &t.Partitions, &t.Messages.Total, &t.Messages.DeadLetter)
		if column == "namespace" {
			t.Namespace = name
		} else {
			t.Task = name
		}
		return t, err
	})
	if err != nil {
		return nil, 0, fmt.Errorf("list %ss: %w", column, err)
	}
	return out, total, nil
}

// queueStatus is a queue's status with its id, to find its partitions.
type queueStatus struct {
	api.QueueStatus
	id int64
}

// QueueStatuses lists queues, optionally of one namespace or task, by name,
// with their counts and per-group lag, and how many match. Bytes is the
// frame bytes of the queue's segments as written (before compression).
func (r *Reader) QueueStatuses(ctx context.Context, namespace, task string, page Page) ([]api.QueueStatus, int64, error) {
	if err := page.validate(); err != nil {
		return nil, 0, err
	}
	var total int64
	if err := r.pool.QueryRow(ctx, `SELECT count(*) FROM lethe.queues q
		 WHERE ($1::text IS NULL OR q.namespace = $1) AND ($2::text IS NULL OR q.task = $2)`,
		nullIfEmpty(namespace), nullIfEmpty(task)).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count queues: %w", err)
	}
	qs, err := r.queueStatuses(ctx, nullIfEmpty(namespace), nullIfEmpty(task), nil, page)
	if err != nil {
		return nil, 0, err
	}
	out := make([]api.QueueStatus, len(qs))
	for i := range qs {
		out[i] = qs[i].QueueStatus
	}
	return out, total, nil
}

func (r *Reader) queueStatuses(ctx context.Context, namespace, task, name *string, page Page) ([]queueStatus, error) {
	rows, err := r.pool.Query(ctx, `
		SELECT q.id, q.name, q.namespace, q.task, q.created_at,
		       (SELECT count(*) FROM lethe.partitions p WHERE p.queue_id = q.id),
		       (SELECT coalesce(sum(p.next_offset - p.low_watermark), 0)::bigint FROM lethe.partitions p WHERE p.queue_id = q.id),
		       (SELECT count(*) FROM lethe.dead_letters d JOIN lethe.partitions p ON p.id = d.partition_id WHERE p.queue_id = q.id),
		       (SELECT coalesce(sum(st.bytes), 0)::bigint
		          FROM lethe.partitions p, lethe.store_partition_stats(p.id) st WHERE p.queue_id = q.id)
		  FROM lethe.queues q
		 WHERE ($1::text IS NULL OR q.namespace = $1) AND ($2::text IS NULL OR q.task = $2)
		   AND ($3::text IS NULL OR q.name = $3)
		 ORDER BY q.name LIMIT $4 OFFSET $5`, namespace, task, name, page.Limit, page.Offset)
	if err != nil {
		return nil, fmt.Errorf("queue status: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (queueStatus, error) {
		var q queueStatus
		err := row.Scan(&q.id, &q.Name, &q.Namespace, &q.Task, &q.CreatedAt, &q.Partitions, &q.Messages.Total,
			&q.Messages.DeadLetter, &q.Bytes)
		q.CreatedAt = q.CreatedAt.UTC()
		q.ConsumerGroups = []api.QueueGroupLag{}
		return q, err
	})
	if err != nil || len(out) == 0 {
		return out, err
	}
	return out, r.addGroupLags(ctx, out)
}

// addGroupLags fills each queue's consumer groups with their lag.
func (r *Reader) addGroupLags(ctx context.Context, qs []queueStatus) error {
	names := make([]string, len(qs))
	at := make(map[string]*queueStatus, len(qs))
	for i := range qs {
		names[i] = qs[i].Name
		at[qs[i].Name] = &qs[i]
	}
	sums, _, err := r.groupSummaries(ctx, nil, names, Page{Limit: PageLimitMax})
	if err != nil {
		return err
	}
	for _, s := range sums {
		if q := at[s.QueueName]; q != nil {
			q.ConsumerGroups = append(q.ConsumerGroups, api.QueueGroupLag{Name: s.Name, Members: s.Members,
				TotalLag: s.TotalLag, MaxTimeLag: s.MaxTimeLag, PartitionsWithLag: s.PartitionsWithLag,
				LeasesHeld: s.LeasesHeld, State: s.State, TimeToLoss: s.TimeToLoss})
		}
	}
	return nil
}

// QueueStatus returns one queue's status; with includePartitions, page
// selects its partitions by name, each with every group's position on it.
func (r *Reader) QueueStatus(ctx context.Context, name string, includePartitions bool, page Page) (*api.QueueDetail, error) {
	if err := page.validate(); err != nil {
		return nil, err
	}
	var options any
	if r.cfg.QueueOptions != nil {
		var err error
		if options, err = r.cfg.QueueOptions(ctx, name); err != nil {
			return nil, err
		}
	}
	qs, err := r.queueStatuses(ctx, nil, nil, &name, Page{Limit: 1})
	if err != nil {
		return nil, err
	}
	if len(qs) == 0 {
		return nil, notFoundf("queue %q does not exist", name)
	}
	q := qs[0]
	d := &api.QueueDetail{ConsumerGroups: q.ConsumerGroups}
	d.Queue = api.QueueDetailQueue{Name: q.Name, Namespace: q.Namespace, Task: q.Task, CreatedAt: q.CreatedAt, Config: options}
	d.Totals = api.QueueDetailTotals{Messages: q.Messages, Total: q.Messages.Total, DeadLetter: q.Messages.DeadLetter,
		Partitions: q.Partitions, Bytes: q.Bytes}
	if includePartitions {
		if d.Partitions, err = r.partitionStatuses(ctx, q.id, name, page); err != nil {
			return nil, err
		}
	}
	return d, nil
}

func (r *Reader) partitionStatuses(ctx context.Context, qid int64, queue string, page Page) ([]*api.PartitionStatus, error) {
	rows, err := r.pool.Query(ctx, `
		SELECT p.id, p.name, p.created_at, p.last_push_at, p.next_offset, p.low_watermark,
		       (SELECT count(*) FROM lethe.dead_letters d WHERE d.partition_id = p.id),
		       s.bytes, s.segments
		  FROM lethe.partitions p, lethe.store_partition_stats(p.id) s
		 WHERE p.queue_id = $1 ORDER BY p.name LIMIT $2 OFFSET $3`, qid, page.Limit, page.Offset)
	if err != nil {
		return nil, fmt.Errorf("partition status of %s: %w", queue, err)
	}
	parts, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*api.PartitionStatus, error) {
		p := &api.PartitionStatus{ConsumerGroups: []api.GroupPartition{}}
		var id uuid.UUID
		err := row.Scan(&id, &p.Name, &p.CreatedAt, &p.LastPushAt, &p.NextOffset, &p.LowWatermark,
			&p.Messages.DeadLetter, &p.Bytes, &p.Segments)
		p.ID, p.Messages.Total = id.String(), p.NextOffset-p.LowWatermark
		p.CreatedAt = p.CreatedAt.UTC()
		utcPtr(p.LastPushAt)
		return p, err
	})
	if err != nil || len(parts) == 0 {
		return parts, err
	}
	return parts, r.addPartitionGroups(ctx, queue, parts)
}

// addPartitionGroups fills each partition with every group's position on it.
func (r *Reader) addPartitionGroups(ctx context.Context, queue string, parts []*api.PartitionStatus) error {
	at := make(map[string]*api.PartitionStatus, len(parts))
	ids := make([]uuid.UUID, len(parts))
	for i, p := range parts {
		at[p.ID] = p
		ids[i] = uuid.MustParse(p.ID)
	}
	rows, err := r.pool.Query(ctx, `SELECT `+groupPartitionColumns+` FROM (`+groupPartitionsSQL+`) gp
		 WHERE gp.partition_id = ANY($4::uuid[]) ORDER BY gp.group_name`,
		r.clock.Now(), nil, []string{queue}, ids)
	if err != nil {
		return fmt.Errorf("group positions on %s: %w", queue, err)
	}
	gps, err := pgx.CollectRows(rows, scanGroupPartition)
	if err != nil {
		return fmt.Errorf("group positions on %s: %w", queue, err)
	}
	for _, g := range gps {
		p := at[g.PartitionID]
		p.ConsumerGroups = append(p.ConsumerGroups, g)
	}
	return nil
}

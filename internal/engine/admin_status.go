package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// MessageCounts count stored messages. Total is what retention has not
// removed yet (next_offset - low_watermark summed over partitions).
type MessageCounts struct {
	Total      int64 `json:"total"`
	DeadLetter int64 `json:"deadLetter"`
}

// Overview is the server-wide picture.
type Overview struct {
	Queues         int64         `json:"queues"`
	Partitions     int64         `json:"partitions"`
	Namespaces     int64         `json:"namespaces"`
	Tasks          int64         `json:"tasks"`
	ConsumerGroups int64         `json:"consumerGroups"`
	ActiveLeases   int64         `json:"activeLeases"`
	Messages       MessageCounts `json:"messages"`
	DeadLetters    int64         `json:"deadLetters"`
	// Bytes is the on-disk size of the segment table with its TOAST and
	// index: compressed, and cheap to read (no scan).
	Bytes int64 `json:"bytes"`
}

// Overview counts queues, partitions, messages, groups and dead letters.
func (e *Engine) Overview(ctx context.Context) (*Overview, error) {
	o := &Overview{}
	err := e.pool.QueryRow(ctx, `
		SELECT (SELECT count(*) FROM lethe.queues),
		       (SELECT count(*) FROM lethe.partitions),
		       (SELECT count(DISTINCT namespace) FROM lethe.queues WHERE namespace <> ''),
		       (SELECT count(DISTINCT task) FROM lethe.queues WHERE task <> ''),
		       (SELECT count(*) FROM (SELECT group_name FROM lethe.subscriptions
		                              UNION SELECT group_name FROM lethe.cursors) g),
		       (SELECT count(*) FROM lethe.cursors WHERE lease_id IS NOT NULL AND lease_until > $1),
		       (SELECT coalesce(sum(next_offset - low_watermark), 0)::bigint FROM lethe.partitions),
		       (SELECT count(*) FROM lethe.dead_letters),
		       lethe.store_disk_bytes()`, e.clock.Now()).
		Scan(&o.Queues, &o.Partitions, &o.Namespaces, &o.Tasks, &o.ConsumerGroups, &o.ActiveLeases,
			&o.Messages.Total, &o.DeadLetters, &o.Bytes)
	if err != nil {
		return nil, fmt.Errorf("overview: %w", err)
	}
	o.Messages.DeadLetter = o.DeadLetters
	return o, nil
}

// TagSummary is one namespace or task with what it groups.
type TagSummary struct {
	Namespace  string        `json:"namespace,omitempty"`
	Task       string        `json:"task,omitempty"`
	Queues     int64         `json:"queues"`
	Partitions int64         `json:"partitions"`
	Messages   MessageCounts `json:"messages"`
}

// Namespaces lists the namespaces queues are configured with, and how many
// there are.
func (e *Engine) Namespaces(ctx context.Context, page Page) ([]TagSummary, int64, error) {
	return e.tags(ctx, "namespace", page)
}

// Tasks lists the tasks queues are configured with, and how many there are.
func (e *Engine) Tasks(ctx context.Context, page Page) ([]TagSummary, int64, error) {
	return e.tags(ctx, "task", page)
}

// tags groups queues by column, which is "namespace" or "task" (never user
// input).
func (e *Engine) tags(ctx context.Context, column string, page Page) ([]TagSummary, int64, error) {
	if err := page.validate(); err != nil {
		return nil, 0, err
	}
	var total int64
	if err := e.pool.QueryRow(ctx, `SELECT count(DISTINCT q.`+column+`) FROM lethe.queues q WHERE q.`+column+` <> ''`).
		Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count %ss: %w", column, err)
	}
	rows, err := e.pool.Query(ctx, `
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
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (TagSummary, error) {
		var t TagSummary
		var name string
		err := r.Scan(&name, &t.Queues, &t.Partitions, &t.Messages.Total, &t.Messages.DeadLetter)
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

// QueueGroupLag is one consumer group's lag on a queue.
type QueueGroupLag struct {
	Name              string `json:"name"`
	Members           int    `json:"members"`
	TotalLag          int64  `json:"totalLag"`
	MaxTimeLag        int64  `json:"maxTimeLag"`
	PartitionsWithLag int    `json:"partitionsWithLag"`
	LeasesHeld        int    `json:"leasesHeld"`
	State             string `json:"state"`
}

// QueueStatus is one queue's status.
type QueueStatus struct {
	Name           string          `json:"name"`
	Namespace      string          `json:"namespace"`
	Task           string          `json:"task"`
	CreatedAt      time.Time       `json:"createdAt"`
	Partitions     int64           `json:"partitions"`
	Messages       MessageCounts   `json:"messages"`
	Bytes          int64           `json:"bytes"`
	ConsumerGroups []QueueGroupLag `json:"consumerGroups"`
	id             int64
}

// QueueStatuses lists queues, optionally of one namespace or task, by name,
// with their counts and per-group lag, and how many match. Bytes is the
// frame bytes of the queue's segments as written (before compression).
func (e *Engine) QueueStatuses(ctx context.Context, namespace, task string, page Page) ([]QueueStatus, int64, error) {
	if err := page.validate(); err != nil {
		return nil, 0, err
	}
	var total int64
	if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM lethe.queues q
		 WHERE ($1::text IS NULL OR q.namespace = $1) AND ($2::text IS NULL OR q.task = $2)`,
		nullIfEmpty(namespace), nullIfEmpty(task)).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count queues: %w", err)
	}
	out, err := e.queueStatuses(ctx, nullIfEmpty(namespace), nullIfEmpty(task), nil, page)
	return out, total, err
}

func (e *Engine) queueStatuses(ctx context.Context, namespace, task, name *string, page Page) ([]QueueStatus, error) {
	rows, err := e.pool.Query(ctx, `
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
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (QueueStatus, error) {
		var q QueueStatus
		err := r.Scan(&q.id, &q.Name, &q.Namespace, &q.Task, &q.CreatedAt, &q.Partitions, &q.Messages.Total,
			&q.Messages.DeadLetter, &q.Bytes)
		q.CreatedAt = q.CreatedAt.UTC()
		q.ConsumerGroups = []QueueGroupLag{}
		return q, err
	})
	if err != nil || len(out) == 0 {
		return out, err
	}
	names := make([]string, len(out))
	at := make(map[string]*QueueStatus, len(out))
	for i := range out {
		names[i] = out[i].Name
		at[out[i].Name] = &out[i]
	}
	sums, _, err := e.groupSummaries(ctx, nil, names, Page{Limit: PageLimitMax})
	if err != nil {
		return nil, err
	}
	for _, s := range sums {
		if q := at[s.QueueName]; q != nil {
			q.ConsumerGroups = append(q.ConsumerGroups, QueueGroupLag{Name: s.Name, Members: s.Members,
				TotalLag: s.TotalLag, MaxTimeLag: s.MaxTimeLag, PartitionsWithLag: s.PartitionsWithLag,
				LeasesHeld: s.LeasesHeld, State: s.State})
		}
	}
	return out, nil
}

// PartitionStatus is one partition's status.
type PartitionStatus struct {
	ID             string           `json:"id"`
	Name           string           `json:"name"`
	CreatedAt      time.Time        `json:"createdAt"`
	LastPushAt     *time.Time       `json:"lastPushAt"`
	NextOffset     int64            `json:"nextOffset"`
	LowWatermark   int64            `json:"lowWatermark"`
	Messages       MessageCounts    `json:"messages"`
	Bytes          int64            `json:"bytes"`
	Segments       int64            `json:"segments"`
	ConsumerGroups []GroupPartition `json:"consumerGroups"`
}

// QueueDetail is one queue's status with its configuration and, on
// request, a page of its partitions.
type QueueDetail struct {
	Queue struct {
		Name      string    `json:"name"`
		Namespace string    `json:"namespace"`
		Task      string    `json:"task"`
		CreatedAt time.Time `json:"createdAt"`
		Config    any       `json:"config"`
	} `json:"queue"`
	Totals struct {
		Messages   MessageCounts `json:"messages"`
		Total      int64         `json:"total"`
		DeadLetter int64         `json:"deadLetter"`
		Partitions int64         `json:"partitions"`
		Bytes      int64         `json:"bytes"`
	} `json:"totals"`
	ConsumerGroups []QueueGroupLag    `json:"consumerGroups"`
	Partitions     []*PartitionStatus `json:"partitions,omitempty"`
}

// QueueStatus returns one queue's status; with includePartitions, page
// selects its partitions by name, each with every group's position on it.
func (e *Engine) QueueStatus(ctx context.Context, name string, includePartitions bool, page Page) (*QueueDetail, error) {
	if err := page.validate(); err != nil {
		return nil, err
	}
	info, err := e.GetQueue(ctx, name)
	if err != nil {
		return nil, err
	}
	qs, err := e.queueStatuses(ctx, nil, nil, &name, Page{Limit: 1})
	if err != nil {
		return nil, err
	}
	if len(qs) == 0 {
		return nil, notFoundf("queue %q does not exist", name)
	}
	q := qs[0]
	d := &QueueDetail{ConsumerGroups: q.ConsumerGroups}
	d.Queue.Name, d.Queue.Namespace, d.Queue.Task, d.Queue.CreatedAt, d.Queue.Config = q.Name, q.Namespace, q.Task, q.CreatedAt, info.Options
	d.Totals.Messages, d.Totals.Total, d.Totals.DeadLetter = q.Messages, q.Messages.Total, q.Messages.DeadLetter
	d.Totals.Partitions, d.Totals.Bytes = q.Partitions, q.Bytes
	if includePartitions {
		if d.Partitions, err = e.partitionStatuses(ctx, q.id, name, page); err != nil {
			return nil, err
		}
	}
	return d, nil
}

func (e *Engine) partitionStatuses(ctx context.Context, qid int64, queue string, page Page) ([]*PartitionStatus, error) {
	rows, err := e.pool.Query(ctx, `
		SELECT p.id, p.name, p.created_at, p.last_push_at, p.next_offset, p.low_watermark,
		       (SELECT count(*) FROM lethe.dead_letters d WHERE d.partition_id = p.id),
		       s.bytes, s.segments
		  FROM lethe.partitions p, lethe.store_partition_stats(p.id) s
		 WHERE p.queue_id = $1 ORDER BY p.name LIMIT $2 OFFSET $3`, qid, page.Limit, page.Offset)
	if err != nil {
		return nil, fmt.Errorf("partition status of %s: %w", queue, err)
	}
	parts, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*PartitionStatus, error) {
		p := &PartitionStatus{ConsumerGroups: []GroupPartition{}}
		var id uuid.UUID
		err := r.Scan(&id, &p.Name, &p.CreatedAt, &p.LastPushAt, &p.NextOffset, &p.LowWatermark,
			&p.Messages.DeadLetter, &p.Bytes, &p.Segments)
		p.ID, p.Messages.Total = id.String(), p.NextOffset-p.LowWatermark
		p.CreatedAt = p.CreatedAt.UTC()
		utcPtr(p.LastPushAt)
		return p, err
	})
	if err != nil || len(parts) == 0 {
		return parts, err
	}
	at := make(map[string]*PartitionStatus, len(parts))
	ids := make([]uuid.UUID, len(parts))
	for i, p := range parts {
		at[p.ID] = p
		ids[i] = uuid.MustParse(p.ID)
	}
	rows, err = e.pool.Query(ctx, `SELECT `+groupPartitionColumns+` FROM (`+groupPartitionsSQL+`) gp
		 WHERE gp.partition_id = ANY($4::uuid[]) ORDER BY gp.group_name`,
		e.clock.Now(), nil, []string{queue}, ids)
	if err != nil {
		return nil, fmt.Errorf("group positions on %s: %w", queue, err)
	}
	gps, err := pgx.CollectRows(rows, scanGroupPartition)
	if err != nil {
		return nil, fmt.Errorf("group positions on %s: %w", queue, err)
	}
	for _, g := range gps {
		p := at[g.PartitionID]
		p.ConsumerGroups = append(p.ConsumerGroups, g)
	}
	return parts, nil
}

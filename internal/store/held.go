package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// QueueHeld is what one queue keeps in the held area, and its dead letters
// (quarantined messages).
type QueueHeld struct {
	Queue       string
	Messages    int64
	Bytes       int64
	Quarantined int64
}

// HeldTotals counts, per queue, the held area and the dead letters: the
// figures of the lethe_held_* and lethe_quarantined_messages gauges. Every
// queue with a held message or a dead letter is present.
func HeldTotals(ctx context.Context, q Querier) ([]QueueHeld, error) {
	rows, err := q.Query(ctx, `
		WITH held AS (
			SELECT p.queue_id, sum(s.frame_count)::bigint AS messages, sum(s.byte_size)::bigint AS bytes
			  FROM lethe.segments s JOIN lethe.partitions p ON p.id = s.partition_id
			 WHERE s.tier = 'held'
			 GROUP BY p.queue_id),
		dlq AS (
			SELECT p.queue_id, count(*) AS n
			  FROM lethe.dead_letters d JOIN lethe.partitions p ON p.id = d.partition_id
			 GROUP BY p.queue_id)
		SELECT q.name, coalesce(h.messages, 0), coalesce(h.bytes, 0), coalesce(d.n, 0)
		  FROM lethe.queues q
		  LEFT JOIN held h ON h.queue_id = q.id
		  LEFT JOIN dlq d ON d.queue_id = q.id
		 WHERE h.queue_id IS NOT NULL OR d.queue_id IS NOT NULL
		 ORDER BY q.name`)
	if err != nil {
		return nil, fmt.Errorf("count the held area: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (QueueHeld, error) {
		var h QueueHeld
		return h, r.Scan(&h.Queue, &h.Messages, &h.Bytes, &h.Quarantined)
	})
	if err != nil {
		return nil, fmt.Errorf("count the held area: %w", err)
	}
	return out, nil
}

// HeldMonth is one queue's share of one month of the held area.
type HeldMonth struct {
	Month       string // YYYY-MM
	Queue       string
	Messages    int64
	Bytes       int64
	Pending     map[string]int64 // per consumer group: held messages it has not consumed
	Quarantined int64            // dead letters of messages held in this month
}

// HeldByMonth describes the held area by month and queue.
func HeldByMonth(ctx context.Context, q Querier) ([]HeldMonth, error) {
	rows, err := q.Query(ctx, `
		WITH held AS (
			SELECT to_char(s.appended_at AT TIME ZONE 'UTC', 'YYYY-MM') AS month, p.queue_id, s.partition_id,
			       s.base_offset, s.last_offset, s.frame_count, s.byte_size
			  FROM lethe.segments s JOIN lethe.partitions p ON p.id = s.partition_id
			 WHERE s.tier = 'held'),
		per AS (
			SELECT h.month, h.queue_id, sum(h.frame_count)::bigint AS messages, sum(h.byte_size)::bigint AS bytes,
			       (SELECT count(*) FROM held h2 JOIN lethe.dead_letters d
			            ON d.partition_id = h2.partition_id AND d.msg_offset BETWEEN h2.base_offset AND h2.last_offset
			         WHERE h2.month = h.month AND h2.queue_id = h.queue_id) AS quarantined
			  FROM held h GROUP BY h.month, h.queue_id),
		pending AS (
			SELECT h.month, h.queue_id, g.group_name,
			       sum(greatest(0, h.last_offset - greatest(h.base_offset, g.next_wanted) + 1))::bigint AS n
			  FROM (SELECT DISTINCT partition_id FROM held) hp
			 CROSS JOIN LATERAL lethe.group_positions(hp.partition_id) g
			  JOIN held h ON h.partition_id = hp.partition_id
			 GROUP BY h.month, h.queue_id, g.group_name)
		SELECT per.month, q.name, per.messages, per.bytes, per.quarantined,
		       coalesce((SELECT jsonb_object_agg(pe.group_name, pe.n) FROM pending pe
		                  WHERE pe.month = per.month AND pe.queue_id = per.queue_id), '{}')
		  FROM per JOIN lethe.queues q ON q.id = per.queue_id
		 ORDER BY per.month, q.name`)
	if err != nil {
		return nil, fmt.Errorf("describe the held area: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (HeldMonth, error) {
		var h HeldMonth
		return h, r.Scan(&h.Month, &h.Queue, &h.Messages, &h.Bytes, &h.Quarantined, &h.Pending)
	})
	if err != nil {
		return nil, fmt.Errorf("describe the held area: %w", err)
	}
	return out, nil
}

// LeafSize is a leaf's size: the planner's row estimate (-1: never
// analyzed) and its bytes on disk with TOAST and indexes.
type LeafSize struct {
	Rows  int64
	Bytes int64
}

// LeafSizes sizes every leaf of lethe.leaves without scanning them.
func LeafSizes(ctx context.Context, q Querier) (map[string]LeafSize, error) {
	rows, err := q.Query(ctx, `
		SELECT l.name, coalesce(c.reltuples, -1)::bigint, coalesce(pg_total_relation_size(c.oid), 0)
		  FROM lethe.leaves l LEFT JOIN pg_class c ON c.oid = to_regclass('lethe.' || l.name)`)
	if err != nil {
		return nil, fmt.Errorf("size the leaves: %w", err)
	}
	out := map[string]LeafSize{}
	var name string
	var sz LeafSize
	_, err = pgx.ForEachRow(rows, []any{&name, &sz.Rows, &sz.Bytes}, func() error {
		out[name] = sz
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("size the leaves: %w", err)
	}
	return out, nil
}

package retention

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrUnknownQueue is a status request for a queue that does not exist.
var ErrUnknownQueue = errors.New("queue does not exist")

// Status is the retention plan of every queue (or one) at one instant.
type Status struct {
	At     time.Time     `json:"at"`
	Queues []QueueStatus `json:"queues"`
}

// QueueStatus is one queue's rules, footprint and the next cycle's work.
type QueueStatus struct {
	Queue   string  `json:"queue"`
	Rules   Rules   `json:"rules"`
	Cutoffs Cutoffs `json:"cutoffs"`
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
	EmptyPartitions int  `json:"emptyPartitions"`
	NextCycle       Plan `json:"nextCycle"`
}

// Rules are a queue's retention options as configured.
type Rules struct {
	RetentionEnabled          bool `json:"retentionEnabled"`
	RetentionSeconds          int  `json:"retentionSeconds"`
	CompletedRetentionSeconds int  `json:"completedRetentionSeconds"`
	MaxWaitTimeSeconds        int  `json:"maxWaitTimeSeconds"`
	DedupWindowSeconds        int  `json:"dedupWindowSeconds"`
}

// Cutoffs are the times before which each rule deletes; nil: rule off.
type Cutoffs struct {
	Retention          *time.Time `json:"retention"`
	CompletedRetention *time.Time `json:"completedRetention"`
	MaxWait            *time.Time `json:"maxWait"`
	Hashes             time.Time  `json:"hashes"`
}

// Plan is what the next cycle would delete if it ran now: a dry run of the
// same walk, deleting nothing.
type Plan struct {
	Retention          Amount `json:"retention"`
	CompletedRetention Amount `json:"completedRetention"`
	MaxWait            Amount `json:"maxWait"`
	Hashes             int64  `json:"hashes"`
	// Partitions empty and idle long enough to be deleted by the cleanup
	// phase (which runs at most once a minute).
	Partitions int `json:"partitions"`
	// Truncated says a partition's walk stopped at PreviewLimit segments:
	// the figures are a lower bound.
	Truncated bool `json:"truncated"`
}

// Status computes the retention plan of queue (every queue when empty)
// at the clock's now. It deletes nothing and takes no lock.
func (s *Service) Status(ctx context.Context, queue string) (*Status, error) {
	now := s.cfg.Clock.Now()
	st := &Status{At: now, Queues: []QueueStatus{}}
	byName := map[string]*QueueStatus{}
	rows, err := s.pool.Query(ctx, `
		SELECT q.name, q.retention_enabled, q.retention_seconds, q.completed_retention_seconds,
		       q.max_wait_time_seconds, q.dedup_window_seconds,
		       c.retention_cutoff, c.completed_cutoff, c.evict_cutoff, c.txn_cutoff,
		       coalesce((SELECT array_agg(h.id ORDER BY h.id) FROM lethe.retention_holds h
		                  WHERE h.queue_id = q.id AND h.released_at IS NULL), '{}')
		  FROM lethe.queues q JOIN lethe.retention_cutoffs($1::timestamptz) c ON c.queue_id = q.id
		 WHERE $2 = '' OR q.name = $2
		 ORDER BY q.name`, now, queue)
	if err != nil {
		return nil, fmt.Errorf("retention status: %w", err)
	}
	for rows.Next() {
		var q QueueStatus
		r, c := &q.Rules, &q.Cutoffs
		if err := rows.Scan(&q.Queue, &r.RetentionEnabled, &r.RetentionSeconds, &r.CompletedRetentionSeconds,
			&r.MaxWaitTimeSeconds, &r.DedupWindowSeconds, &c.Retention, &c.CompletedRetention, &c.MaxWait, &c.Hashes, &q.Holds); err != nil {
			rows.Close()
			return nil, fmt.Errorf("retention status: %w", err)
		}
		st.Queues = append(st.Queues, q)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("retention status: %w", err)
	}
	if queue != "" && len(st.Queues) == 0 {
		return nil, fmt.Errorf("%w: %q", ErrUnknownQueue, queue)
	}
	for i := range st.Queues {
		byName[st.Queues[i].Queue] = &st.Queues[i]
	}
	if err := s.statusPartitions(ctx, now, queue, byName); err != nil {
		return nil, err
	}
	if err := s.statusTotals(ctx, now, queue, byName); err != nil {
		return nil, err
	}
	return st, nil
}

// statusPartitions fills what the work list tells per queue and runs the
// dry run of the partitions that have work.
func (s *Service) statusPartitions(ctx context.Context, now time.Time, queue string, byName map[string]*QueueStatus) error {
	work, err := loadWork(ctx, s.pool, now, queue, heads{}) // every head read: the status is exact
	if err != nil {
		return err
	}
	for _, w := range work {
		q := byName[w.Queue]
		if q == nil {
			continue // created after the first query
		}
		q.Partitions, q.EmptyPartitions = w.Partitions, w.EmptyPartitions
		q.OldestMessageAt, q.WindowLagSeconds = w.OldestAt, w.WindowLagSeconds
		if w.OldestAt != nil {
			q.OldestAgeSeconds = now.Sub(*w.OldestAt).Seconds()
		}
		for _, p := range w.Due {
			if !p.RetentionDue && !p.EvictDue {
				continue
			}
			if err := s.preview(ctx, p, &q.NextCycle); err != nil {
				return err
			}
		}
	}
	return nil
}

// preview adds one partition's dry run to plan.
func (s *Service) preview(ctx context.Context, w partitionWork, plan *Plan) error {
	rows, err := s.pool.Query(ctx, `SELECT rule, segments, frames, bytes, truncated FROM lethe.sweep_preview($1, $2, $3, $4, $5)`,
		w.PartitionID, w.RetentionCutoff, w.CompletedCutoff, w.EvictCutoff, s.cfg.PreviewLimit)
	if err != nil {
		return fmt.Errorf("retention status: dry run of %s/%s: %w", w.Queue, w.Partition, err)
	}
	defer rows.Close()
	for rows.Next() {
		var rule string
		var segs int32
		var a Amount
		var truncated bool
		if err := rows.Scan(&rule, &segs, &a.Frames, &a.Bytes, &truncated); err != nil {
			return fmt.Errorf("retention status: dry run of %s/%s: %w", w.Queue, w.Partition, err)
		}
		a.Segments = int64(segs)
		plan.Truncated = plan.Truncated || truncated
		switch rule {
		case RuleRetention:
			plan.Retention.add(a)
		case RuleCompletedRetention:
			plan.CompletedRetention.add(a)
		case RuleMaxWait:
			plan.MaxWait.add(a)
		}
	}
	return rows.Err()
}

// statusTotals fills the per-queue footprint: segments, bytes, retained
// offsets, hashes (and those past their window), reclaimable partitions.
func (s *Service) statusTotals(ctx context.Context, now time.Time, queue string, byName map[string]*QueueStatus) error {
	idleBefore, cleanupOn := daysBefore(now, s.cfg.PartitionCleanupDays)
	cleanupOn = cleanupOn && !s.cfg.KeepPartitions
	rows, err := s.pool.Query(ctx, `
		SELECT c.queue_name, seg.n, seg.bytes,
		       (SELECT coalesce(sum(p.next_offset - p.low_watermark), 0)::bigint
		          FROM lethe.partitions p WHERE p.queue_id = c.queue_id),
		       txn.n, txn.due,
		       CASE WHEN $3 THEN (SELECT count(*) FROM lethe.partitions p
		                           WHERE p.queue_id = c.queue_id AND p.next_offset = p.low_watermark
		                             AND lethe.partition_reclaimable(p.id, $4))
		            ELSE 0 END
		  FROM lethe.retention_cutoffs($1::timestamptz) c
		 CROSS JOIN LATERAL (
		       SELECT count(*) AS n, coalesce(sum(s.byte_size), 0)::bigint AS bytes
		         FROM lethe.segments s JOIN lethe.partitions p ON p.id = s.partition_id
		        WHERE p.queue_id = c.queue_id) seg
		 CROSS JOIN LATERAL (
		       SELECT coalesce(sum(cardinality(t.hashes)), 0) AS n,
		              coalesce(sum(cardinality(t.hashes)) FILTER (WHERE t.created_at < c.txn_cutoff), 0) AS due
		         FROM lethe.txns t JOIN lethe.partitions p ON p.id = t.partition_id
		        WHERE p.queue_id = c.queue_id) txn
		 WHERE $2 = '' OR c.queue_name = $2`, now, queue, cleanupOn, idleBefore)
	if err != nil {
		return fmt.Errorf("retention status: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var t QueueStatus
		var reclaimable int64
		if err := rows.Scan(&name, &t.Segments, &t.Bytes, &t.Messages, &t.Hashes, &t.NextCycle.Hashes, &reclaimable); err != nil {
			return fmt.Errorf("retention status: %w", err)
		}
		if q := byName[name]; q != nil {
			q.Segments, q.Bytes, q.Messages, q.Hashes = t.Segments, t.Bytes, t.Messages, t.Hashes
			q.NextCycle.Hashes, q.NextCycle.Partitions = t.NextCycle.Hashes, int(reclaimable)
		}
	}
	return rows.Err()
}

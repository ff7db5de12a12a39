package store

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// The log's statements on cursors (lethe.cursors): a group's position and
// lease on a partition, which pops and acks lock, read and write. The
// engine loads and stores a cursor around the delivery rules
// (internal/lease). Several of these statements are queued in a consumer
// transaction's pipelined batches (internal/engine's pipelinedTx) and run
// with generic plans: each keeps its text, and pgx caches a prepared
// statement by its text.

// ExtendQueueLease pushes the expiry of every cursor holding lease id
// among the partitions of queue qid to now + seconds (the queue's
// lease_time when seconds is 0), answering the earliest new expiry: nil
// when no cursor there holds the lease.
func ExtendQueueLease(ctx context.Context, q Querier, id uuid.UUID, now time.Time, seconds int, qid int64) (*time.Time, error) {
	var until *time.Time
	err := q.QueryRow(ctx, extendLeaseOfQueueSQL, id, now, seconds, qid).Scan(&until)
	return until, err
}

// ExtendLease is ExtendQueueLease among the partitions of every queue, for
// a lease id that names none.
func ExtendLease(ctx context.Context, q Querier, id uuid.UUID, now time.Time, seconds int) (*time.Time, error) {
	var until *time.Time
	err := q.QueryRow(ctx, extendLeaseAnySQL, id, now, seconds).Scan(&until)
	return until, err
}

var (
	extendLeaseOfQueueSQL = extendLeaseSQL("p.queue_id = $4")
	extendLeaseAnySQL     = extendLeaseSQL("true")
)

// extendLeaseSQL extends every cursor holding lease $1 among the
// partitions partitionFilter selects, answering the earliest new expiry.
func extendLeaseSQL(partitionFilter string) string {
	return `
		WITH extended AS (
			UPDATE lethe.cursors c
			   SET lease_until = $2::timestamptz + make_interval(secs => CASE WHEN $3 > 0 THEN $3 ELSE q.lease_time END),
			       updated_at = $2
			  FROM lethe.partitions p JOIN lethe.queues q ON q.id = p.queue_id
			 WHERE ` + partitionFilter + ` AND p.id = c.partition_id AND c.lease_id = $1
			RETURNING c.lease_until)
		SELECT min(lease_until) FROM extended`
}

// WorkCandidates lists up to limit partitions of queue qid that may have
// work for group, each as row(pid, name, whether the group has a cursor on
// it): offsets past its cursor (and past low_watermark, below which nothing
// is stored), or a gap to tell (retention deleted past its cursor), no live
// lease at now, no retry waiting past now, not among tried. With fromAt, a
// partition without a cursor counts only when pushed to since; with
// windowBuffer (seconds), only when not pushed to for that long; with
// delayed (seconds), only when the next stored message was written that
// long before now. The least recently popped come first.
func WorkCandidates[T any](ctx context.Context, q Querier, qid int64, group string, now time.Time, fromAt *time.Time,
	windowBuffer, limit, delayed int, tried []uuid.UUID, row func(pid uuid.UUID, name string, hasCursor bool) T) ([]T, error) {
	rows, err := q.Query(ctx, `
		SELECT p.id, p.name, c.partition_id IS NOT NULL
		  FROM lethe.partitions p
		  LEFT JOIN lethe.cursors c ON c.partition_id = p.id AND c.group_name = $2
		 WHERE p.queue_id = $1
		   AND (p.next_offset > greatest(coalesce(c.committed + 1, 0), p.low_watermark)
		        OR c.committed + 1 < p.low_watermark)
		   AND (c.lease_id IS NULL OR c.lease_until <= $3)
		   AND (c.retry_after IS NULL OR c.retry_after <= $3)
		   AND ($4::timestamptz IS NULL OR c.partition_id IS NOT NULL OR p.last_push_at >= $4)
		   AND ($5 = 0 OR p.last_push_at <= $3 - make_interval(secs => $5))
		   -- With delayedProcessing, the next stored message must have been
		   -- written before the visibility cutoff.
		   AND ($7 = 0 OR coalesce(lethe.store_time_at(p.id, coalesce(c.committed + 1, 0)), '-infinity')
		                    <= $3 - make_interval(secs => $7))
		   AND p.id <> ALL ($8::uuid[])
		 ORDER BY c.last_pop_at NULLS FIRST
		 LIMIT $6`, qid, group, now, fromAt, windowBuffer, limit, delayed, tried)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (T, error) {
		var pid uuid.UUID
		var name string
		var hasCursor bool
		err := r.Scan(&pid, &name, &hasCursor)
		return row(pid, name, hasCursor), err
	})
}

// CursorExists says whether group has a cursor on partition pid.
func CursorExists(ctx context.Context, q Querier, pid uuid.UUID, group string) (bool, error) {
	var exists bool
	err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM lethe.cursors WHERE partition_id = $1 AND group_name = $2)`,
		pid, group).Scan(&exists)
	return exists, err
}

// CreateCursor creates group's cursor on partition pid, done with the
// offsets up to committed (or up to the partition's low watermark, below
// which nothing is stored, when that is later), unless the group has one;
// ErrPartitionGone when the partition does not exist.
func CreateCursor(ctx context.Context, q Querier, pid uuid.UUID, group string, committed int64, now time.Time) error {
	// A partition already gone gives NULL, then -1: the insert fails on the
	// foreign key, as it should.
	_, err := q.Exec(ctx, `
		INSERT INTO lethe.cursors (partition_id, group_name, committed, updated_at)
		VALUES ($1, $2, greatest($3::bigint,
		                         coalesce((SELECT p.low_watermark - 1 FROM lethe.partitions p WHERE p.id = $1), -1)), $4)
		ON CONFLICT DO NOTHING`, pid, group, committed, now)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23503" {
		return ErrPartitionGone
	}
	return err
}

// MarkPopped records a pop of group on partition pid at now (last_pop_at
// alone), which orders WorkCandidates.
func MarkPopped(ctx context.Context, q Querier, pid uuid.UUID, group string, now time.Time) error {
	_, err := q.Exec(ctx, `UPDATE lethe.cursors SET last_pop_at = $3 WHERE partition_id = $1 AND group_name = $2`,
		pid, group, now)
	return err
}

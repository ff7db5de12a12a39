package store

import (
	"context"
	"errors"
	"fmt"
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

// cursorColumnsTmpl lists a cursor's columns; %[1]s is a table alias
// prefix ("" or "c.").
const cursorColumnsTmpl = `%[1]spartition_id, %[1]sgroup_name, %[1]scommitted, %[1]slease_id,
	coalesce(%[1]slease_until, 'epoch'), coalesce(%[1]slease_offsets, '{}'), coalesce(%[1]slease_hashes, '{}'),
	coalesce(%[1]slease_done, '{}'), coalesce(%[1]slease_fail, '{}'), coalesce(%[1]slease_error, ''),
	%[1]sretry_offset, %[1]sretry_count, %[1]sretry_after, coalesce(%[1]sacked_ahead, '{}')`

// cursorColumns lists, with the table alias prefix alias, the columns a
// cursor is read as, in this order: partition_id (uuid), group_name
// (text), committed (bigint), lease_id (uuid, NULL: no lease),
// lease_until (timestamptz, 'epoch' for NULL), lease_offsets,
// lease_hashes, lease_done, lease_fail (bigint[], '{}' for NULL),
// lease_error (text, the empty string for NULL), retry_offset (bigint, NULL),
// retry_count (int), retry_after (timestamptz, NULL), acked_ahead
// (bigint[], '{}' for NULL). LockFreeCursor and LockCursorForAck answer
// them first.
func cursorColumns(alias string) string { return fmt.Sprintf(cursorColumnsTmpl, alias) }

// CursorWrite is what SaveCursorStmt writes of a cursor: its key, position,
// lease (nil and empty when none is held), retry state and offsets done
// ahead. Error "" and AckedAhead empty are stored as NULL.
type CursorWrite struct {
	PartitionID        uuid.UUID
	Group              string
	Committed          int64
	LeaseID            *uuid.UUID
	LeaseFrom, LeaseTo *int64
	LeaseUntil         *time.Time
	Offsets, Hashes    []int64
	Done, Failed       []int64
	Error              string
	RetryOffset        *int64
	RetryCount         int
	RetryAfter         *time.Time
	AckedAhead         []int64
	Now                time.Time // updated_at, and last_pop_at when Popped
	Popped             bool
}

// SaveCursorStmt is the statement that writes a cursor back, with its
// arguments: the engine queues it in a consumer transaction's pipeline
// (sent with the transaction's next statement or its COMMIT).
func SaveCursorStmt(w CursorWrite) (sql string, args []any) {
	return saveCursorSQL, []any{w.PartitionID, w.Group, w.Committed, w.LeaseID, w.LeaseFrom, w.LeaseTo, w.LeaseUntil,
		w.Offsets, w.Hashes, w.Done, w.Failed, nullIfEmpty(w.Error),
		w.RetryOffset, w.RetryCount, w.Now, w.RetryAfter, nilIfEmpty(w.AckedAhead), w.Popped}
}

const saveCursorSQL = `
		UPDATE lethe.cursors SET committed = $3, lease_id = $4, lease_from = $5, lease_to = $6,
		       lease_until = $7, lease_offsets = $8, lease_hashes = $9, lease_done = $10, lease_fail = $11,
		       lease_error = $12, retry_offset = $13, retry_count = $14, updated_at = $15, retry_after = $16,
		       acked_ahead = $17, last_pop_at = CASE WHEN $18 THEN $15 ELSE last_pop_at END
		 WHERE partition_id = $1 AND group_name = $2`

// LockFreeCursor locks group's cursor on the first of pids (in their
// order) that holds no live lease at now and that no other transaction has
// locked (skipped), and reads, when the partition has offsets past the
// cursor, up to batch of them (and as many as the group acked ahead)
// within ReadBytesBound(maxBytes), as Read would. A row is answered for
// each segment read, one with NULL segment columns when none was; each
// holds the cursor's columns (cursorColumns), then the partition's
// next_offset, low_watermark, last_push_at, the cursor's last_pop_at,
// whether it read, from where and how many, and the segment's
// base_offset, last_offset, last_at and frames (DecodeSegments decodes
// them). No rows: every cursor of pids is leased or locked.
func LockFreeCursor(ctx context.Context, q Querier, pids []uuid.UUID, group string, now time.Time, batch int, maxBytes int64) (pgx.Rows, error) {
	return q.Query(ctx, lockFirstFreeSQL, pids, group, now, batch, ReadBytesBound(maxBytes))
}

// lockFirstFreeSQL answers a row for each segment read (one with NULL
// segment columns when none was), each with the cursor's columns; rows,
// not arrays: aggregating the frames cost PostgreSQL more than the round
// trip it saved. Without an ORDER BY, which sorted the frames too; the
// decoder orders the segments.
var lockFirstFreeSQL = `SELECT ` + cursorColumns("x.") + `, x.next_offset, x.low_watermark, x.last_push_at, x.last_pop_at,
	       x.next_offset > greatest(x.committed + 1, x.low_watermark), x.committed + 1, l.n,
	       s.base_offset, s.last_offset, s.last_at, s.frames
	  FROM (SELECT c.*, p.next_offset, p.low_watermark, p.last_push_at
	          FROM lethe.cursors c JOIN lethe.partitions p ON p.id = c.partition_id
	         WHERE c.partition_id = ANY ($1) AND c.group_name = $2
	           AND (c.lease_id IS NULL OR c.lease_until <= $3)
	         ORDER BY array_position($1, c.partition_id)
	         LIMIT 1
	           FOR UPDATE OF c SKIP LOCKED) x
	 CROSS JOIN LATERAL (SELECT $4::int + coalesce(cardinality(x.acked_ahead), 0) AS n) l
	  LEFT JOIN LATERAL (
	       SELECT r.* FROM lethe.read_segments(x.partition_id, x.committed + 1, l.n, $5) r
	        WHERE x.next_offset > greatest(x.committed + 1, x.low_watermark)) s ON true`

// LockCursorForAck locks group's cursor on pid, waiting for a pop or ack
// holding it, and reads with it its queue's policy: the row holds the
// cursor's columns (cursorColumns), then the queue's id and name, the
// partition's name, the queue's retry_limit and retry_delay_ms, and the
// partition's next_offset. pgx.ErrNoRows when the group has no cursor
// there.
func LockCursorForAck(ctx context.Context, q Querier, pid uuid.UUID, group string) pgx.Row {
	return q.QueryRow(ctx, lockCursorForAckSQL, pid, group)
}

var lockCursorForAckSQL = `SELECT ` + cursorColumns("c.") + `, q.id, q.name, p.name, q.retry_limit, q.retry_delay_ms, p.next_offset
		  FROM lethe.cursors c
		  JOIN lethe.partitions p ON p.id = c.partition_id
		  JOIN lethe.queues q ON q.id = p.queue_id
		 WHERE c.partition_id = $1 AND c.group_name = $2
		   FOR UPDATE OF c`

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

func nullIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func nilIfEmpty(s []int64) []int64 {
	if len(s) == 0 {
		return nil
	}
	return s
}

package store

import (
	"context"
	"time"

	"github.com/google/uuid"
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

package store

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// DeadLetter is a copy of a message a consumer group gave up on.
type DeadLetter struct {
	Partition uuid.UUID
	Group     string
	Offset    int64
	TxnID     string
	TraceID   string
	// Payload is kept as jsonb when PostgreSQL can store it as such (nil:
	// none); Sealed is an encrypted queue's payload, kept sealed.
	Payload *string
	Sealed  []byte
	// Error is why the group gave up; UnstorableNote is added to it when
	// Payload is set but jsonb refuses it (the payload is then kept NULL).
	Error          string
	UnstorableNote string
	Retries        int
	CreatedAt      time.Time
	FailedAt       time.Time
}

// WriteDeadLetter inserts d into the dead letters.
func WriteDeadLetter(ctx context.Context, q Querier, d DeadLetter) error {
	_, err := q.Exec(ctx, `
		WITH v AS (SELECT lethe.jsonb_or_null($6) AS payload)
		INSERT INTO lethe.dead_letters (partition_id, group_name, msg_offset, txn_id, trace_id, payload, payload_sealed,
		                                error, retry_count, created_at, failed_at)
		SELECT $1, $2, $3, $4, $5, v.payload, $12,
		       CASE WHEN $6::text IS NOT NULL AND v.payload IS NULL THEN $7 || $11 ELSE $7 END, $8, $9, $10
		  FROM v`,
		d.Partition, d.Group, d.Offset, d.TxnID, d.TraceID, d.Payload, d.Error, d.Retries, d.CreatedAt, d.FailedAt,
		d.UnstorableNote, d.Sealed)
	return err
}

// DeleteDeadLetterUnlessHeld deletes dead letter id unless its queue is
// under a retention hold (lethe.queue_held), and answers whether it did.
func DeleteDeadLetterUnlessHeld(ctx context.Context, q Querier, id int64) (bool, error) {
	tag, err := q.Exec(ctx, `DELETE FROM lethe.dead_letters d WHERE d.id = $1
		AND NOT EXISTS (SELECT 1 FROM lethe.partitions p WHERE p.id = d.partition_id AND lethe.queue_held(p.queue_id))`, id)
	return tag.RowsAffected() > 0, err
}

// DeadLetterQueueID answers the id of dead letter id's queue;
// pgx.ErrNoRows when there is no such dead letter.
func DeadLetterQueueID(ctx context.Context, q Querier, id int64) (*int64, error) {
	var qid *int64
	err := q.QueryRow(ctx, `SELECT p.queue_id FROM lethe.dead_letters d JOIN lethe.partitions p ON p.id = d.partition_id
			 WHERE d.id = $1`, id).Scan(&qid)
	return qid, err
}

// ReplayedDeadLetter is what a replay reads of a dead letter.
type ReplayedDeadLetter struct {
	Partition     uuid.UUID
	QueueID       int64
	Queue         string
	PartitionName string
	TraceID       string
	Payload       []byte
	Sealed        []byte
}

// LockDeadLetter reads dead letter id for a replay and locks it FOR
// UPDATE; pgx.ErrNoRows when there is no such dead letter.
func LockDeadLetter(ctx context.Context, q Querier, id int64) (ReplayedDeadLetter, error) {
	var d ReplayedDeadLetter
	err := q.QueryRow(ctx, `
		SELECT d.partition_id, q.id, q.name, p.name, d.trace_id, d.payload, d.payload_sealed
		  FROM lethe.dead_letters d
		  JOIN lethe.partitions p ON p.id = d.partition_id
		  JOIN lethe.queues q ON q.id = p.queue_id
		 WHERE d.id = $1 FOR UPDATE OF d`, id).Scan(&d.Partition, &d.QueueID, &d.Queue, &d.PartitionName, &d.TraceID, &d.Payload, &d.Sealed)
	return d, err
}

// DeleteDeadLetter deletes dead letter id.
func DeleteDeadLetter(ctx context.Context, q Querier, id int64) error {
	_, err := q.Exec(ctx, `DELETE FROM lethe.dead_letters WHERE id = $1`, id)
	return err
}

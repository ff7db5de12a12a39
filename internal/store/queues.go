package store

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// The log's statements on queue and partition rows: the engine's catalog
// reads a queue's delivery options and creates a queue and its partitions
// on their first push. A queue's options are written by its configuration
// (package queueopts).

// QueueRow is what the log reads of a queue's row to deliver by it.
type QueueRow struct {
	ID                int64
	LeaseTime         int
	RetryLimit        int
	RetryDelayMs      int
	DelayedProcessing int
	WindowBuffer      int
	TTL               int
	MaxSize           int
	Encrypted         bool
}

// LoadQueue reads the named queue's delivery options; pgx.ErrNoRows when
// no queue has that name.
func LoadQueue(ctx context.Context, q Querier, name string) (QueueRow, error) {
	var r QueueRow
	err := q.QueryRow(ctx, `
		SELECT id, lease_time, retry_limit, retry_delay_ms, delayed_processing, window_buffer,
		       coalesce((options->>'ttl')::int, 0), coalesce((options->>'maxSize')::int, 0),
		       coalesce((options->>'encryptionEnabled')::boolean, false)
		  FROM lethe.queues WHERE name = $1`, name).
		Scan(&r.ID, &r.LeaseTime, &r.RetryLimit, &r.RetryDelayMs, &r.DelayedProcessing, &r.WindowBuffer,
			&r.TTL, &r.MaxSize, &r.Encrypted)
	return r, err
}

// CreateQueue inserts a queue with the default options, retention tier
// and quarantined policy given, unless a queue of that name exists.
func CreateQueue(ctx context.Context, q Querier, name string, now time.Time, tier, quarantined string) error {
	_, err := q.Exec(ctx, `
		INSERT INTO lethe.queues (name, created_at, updated_at, retention_tier, quarantined) VALUES ($1, $2, $2, $3, $4)
		ON CONFLICT (name) DO NOTHING`, name, now, tier, quarantined)
	return err
}

// EnsureQueue is CreateQueue answering the queue's id, whether it
// inserted it or found it. pgx.ErrNoRows says a concurrent insert of the
// same queue is not visible to this statement's snapshot yet: the next
// statement can see it.
func EnsureQueue(ctx context.Context, q Querier, name string, now time.Time, tier, quarantined string) (int64, error) {
	var qid int64
	err := q.QueryRow(ctx, `
		WITH ins AS (
			INSERT INTO lethe.queues (name, created_at, updated_at, retention_tier, quarantined) VALUES ($1, $2, $2, $3, $4)
			ON CONFLICT (name) DO NOTHING
			RETURNING id)
		SELECT id FROM ins
		UNION ALL
		SELECT id FROM lethe.queues WHERE name = $1
		LIMIT 1`, name, now, tier, quarantined).Scan(&qid)
	return qid, err
}

// EnsurePartition inserts partition name of queue qid with id, unless it
// exists, and answers its id. pgx.ErrNoRows says a concurrent insert of
// the same partition is not visible to this statement's snapshot yet: the
// next statement can see it.
func EnsurePartition(ctx context.Context, q Querier, id uuid.UUID, qid int64, name string, now time.Time) (uuid.UUID, error) {
	var got uuid.UUID
	err := q.QueryRow(ctx, `
		WITH ins AS (
			INSERT INTO lethe.partitions (id, queue_id, name, created_at)
			VALUES ($1, $2, $3, $4)
			ON CONFLICT (queue_id, name) DO NOTHING
			RETURNING id)
		SELECT id FROM ins
		UNION ALL
		SELECT id FROM lethe.partitions WHERE queue_id = $2 AND name = $3
		LIMIT 1`, id, qid, name, now).Scan(&got)
	return got, err
}

// PartitionID answers the id of partition name of queue qid;
// pgx.ErrNoRows when it does not exist.
func PartitionID(ctx context.Context, q Querier, qid int64, name string) (uuid.UUID, error) {
	var id uuid.UUID
	err := q.QueryRow(ctx, `SELECT id FROM lethe.partitions WHERE queue_id = $1 AND name = $2`, qid, name).Scan(&id)
	return id, err
}

// QueueID answers the id of the named queue; pgx.ErrNoRows when no queue
// has that name.
func QueueID(ctx context.Context, q Querier, name string) (int64, error) {
	var qid int64
	err := q.QueryRow(ctx, `SELECT id FROM lethe.queues WHERE name = $1`, name).Scan(&qid)
	return qid, err
}

// QueueDepth counts the messages of queue qid stored past group's cursor
// (past the low watermark where the group has none).
func QueueDepth(ctx context.Context, q Querier, qid int64, group string) (int64, error) {
	var n int64
	err := q.QueryRow(ctx, `
		SELECT coalesce(sum(greatest(p.next_offset - greatest(p.low_watermark, coalesce(c.committed + 1, 0)), 0)), 0)
		  FROM lethe.partitions p
		  LEFT JOIN lethe.cursors c ON c.partition_id = p.id AND c.group_name = $2
		 WHERE p.queue_id = $1`, qid, group).Scan(&n)
	return n, err
}

// PartitionExists says whether partition pid exists (an ack's answer when
// the group has no cursor on it, in the ack's transaction).
func PartitionExists(ctx context.Context, q Querier, pid uuid.UUID) (bool, error) {
	var exists bool
	err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM lethe.partitions WHERE id = $1)`, pid).Scan(&exists)
	return exists, err
}

// PartitionHead answers the id and next offset of partition name of the
// named queue, read from the database (a push's claim of an id lethe
// minted); pgx.ErrNoRows when it does not exist.
func PartitionHead(ctx context.Context, q Querier, queue, partition string) (pid uuid.UUID, next int64, err error) {
	// The text is the statement's since it was the engine's, indentation
	// included (pgx caches a prepared statement by its text).
	err = q.QueryRow(ctx, `
				SELECT p.id, p.next_offset FROM lethe.partitions p JOIN lethe.queues q ON q.id = p.queue_id
				 WHERE q.name = $1 AND p.name = $2`, queue, partition).Scan(&pid, &next)
	return pid, next, err
}

// PartitionQueue answers the name of partition pid's queue; pgx.ErrNoRows
// when there is no such partition.
func PartitionQueue(ctx context.Context, q Querier, pid uuid.UUID) (string, error) {
	var name string
	err := q.QueryRow(ctx, `SELECT q.name FROM lethe.partitions p JOIN lethe.queues q ON q.id = p.queue_id
		WHERE p.id = $1`, pid).Scan(&name)
	return name, err
}

// QueuesOf lists the names of the queues of a namespace and/or task (""
// matches any) in the order a wildcard pop tries them: higher priority
// first, then by name; at most 1000.
func QueuesOf(ctx context.Context, q Querier, namespace, task string) ([]string, error) {
	rows, err := q.Query(ctx, `
		SELECT name FROM lethe.queues
		 WHERE ($1 = '' OR namespace = $1) AND ($2 = '' OR task = $2)
		 ORDER BY coalesce((options->>'priority')::int, 0) DESC, name LIMIT 1000`, namespace, task)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

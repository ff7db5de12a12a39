package store

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// The statements on consumer groups' subscriptions and cursors outside a
// pop's and an ack's: registering a subscription, moving or deleting a
// group, seeking it.

// SubscriptionFrom answers where group's subscription to queue qid starts
// (nil: at the oldest retained message); pgx.ErrNoRows when the group has
// none there.
func SubscriptionFrom(ctx context.Context, q Querier, qid int64, group string) (*time.Time, error) {
	var from *time.Time
	err := q.QueryRow(ctx, `SELECT from_at FROM lethe.subscriptions WHERE queue_id = $1 AND group_name = $2`,
		qid, group).Scan(&from)
	return from, err
}

// Subscribe registers group's subscription to queue qid, unless it has
// one.
func Subscribe(ctx context.Context, q Querier, qid int64, group, mode string, from *time.Time, now time.Time) error {
	_, err := q.Exec(ctx, `
		INSERT INTO lethe.subscriptions (queue_id, group_name, mode, from_at, created_at)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`, qid, group, mode, from, now)
	return err
}

// MoveSubscriptions sets the start of every subscription of group to
// from, and answers how many it moved.
func MoveSubscriptions(ctx context.Context, q Querier, group string, from time.Time) (int64, error) {
	tag, err := q.Exec(ctx, `
		UPDATE lethe.subscriptions SET from_at = $2, mode = 'timestamp' WHERE group_name = $1`, group, from)
	return tag.RowsAffected(), err
}

// GroupExists tells whether group has a subscription or a cursor on queue
// qid (nil: on any queue).
func GroupExists(ctx context.Context, q Querier, group string, qid *int64) (bool, error) {
	var exists bool
	err := q.QueryRow(ctx, `
		SELECT EXISTS (SELECT 1 FROM lethe.subscriptions WHERE group_name = $1 AND ($2::bigint IS NULL OR queue_id = $2))
		    OR EXISTS (SELECT 1 FROM lethe.cursors c JOIN lethe.partitions p ON p.id = c.partition_id
		                WHERE c.group_name = $1 AND ($2::bigint IS NULL OR p.queue_id = $2))`,
		group, qid).Scan(&exists)
	return exists, err
}

// DeleteGroupCursors deletes group's cursors (and so its leases) on queue
// qid (nil: on every queue), and answers how many.
func DeleteGroupCursors(ctx context.Context, q Querier, group string, qid *int64) (int64, error) {
	tag, err := q.Exec(ctx, `
		DELETE FROM lethe.cursors c USING lethe.partitions p
		 WHERE p.id = c.partition_id AND c.group_name = $1 AND ($2::bigint IS NULL OR p.queue_id = $2)`, group, qid)
	return tag.RowsAffected(), err
}

// DeleteGroupSubscriptions deletes group's subscriptions to queue qid
// (nil: to every queue).
func DeleteGroupSubscriptions(ctx context.Context, q Querier, group string, qid *int64) error {
	_, err := q.Exec(ctx, `
		DELETE FROM lethe.subscriptions WHERE group_name = $1 AND ($2::bigint IS NULL OR queue_id = $2)`,
		group, qid)
	return err
}

// LockGroupCursors locks, in partition order, group's cursors on queue
// qid (on its partition only, when only is set) for update.
func LockGroupCursors(ctx context.Context, q Querier, qid int64, only *uuid.UUID, group string) error {
	_, err := q.Exec(ctx, `
		SELECT 1 FROM lethe.cursors c JOIN lethe.partitions p ON p.id = c.partition_id
		 WHERE p.queue_id = $1 AND ($2::uuid IS NULL OR p.id = $2) AND c.group_name = $3
		 ORDER BY c.partition_id FOR UPDATE OF c`, qid, only, group)
	return err
}

// PartitionPosition is where a partition's log stands.
type PartitionPosition struct {
	ID        uuid.UUID
	Next, Low int64
	// LastPush is when the partition was last pushed to (nil: never).
	LastPush *time.Time
}

// SharePartitions answers the partitions of queue qid (only the one with
// id only, when set), sorted by id, each taken FOR KEY SHARE.
func SharePartitions(ctx context.Context, q Querier, qid int64, only *uuid.UUID) ([]PartitionPosition, error) {
	rows, err := q.Query(ctx, `
		SELECT id, next_offset, low_watermark, last_push_at FROM lethe.partitions
		 WHERE queue_id = $1 AND ($2::uuid IS NULL OR id = $2) ORDER BY id FOR KEY SHARE`, qid, only)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (PartitionPosition, error) {
		var p PartitionPosition
		return p, r.Scan(&p.ID, &p.Next, &p.Low, &p.LastPush)
	})
}

// SeekCursors sets group's cursor on each partition pids[i] to committed
// offset committed[i], creating the cursors it lacks; a moved cursor loses
// its lease, retry count and delay, and the offsets acked ahead. pids must
// be sorted, so concurrent seeks lock cursors in the same order.
func SeekCursors(ctx context.Context, q Querier, group string, now time.Time, pids []uuid.UUID, committed []int64) error {
	_, err := q.Exec(ctx, `
		INSERT INTO lethe.cursors (partition_id, group_name, committed, updated_at)
		SELECT u.pid, $1, u.committed, $2 FROM unnest($3::uuid[], $4::bigint[]) AS u(pid, committed)
		 ORDER BY u.pid
		ON CONFLICT (partition_id, group_name) DO UPDATE SET
		       committed = EXCLUDED.committed, lease_id = NULL, lease_from = NULL, lease_to = NULL,
		       lease_until = NULL, lease_offsets = NULL, lease_hashes = NULL, lease_done = NULL, lease_fail = NULL,
		       lease_error = NULL, retry_offset = NULL, retry_count = 0, retry_after = NULL, acked_ahead = NULL,
		       updated_at = EXCLUDED.updated_at`,
		group, now, pids, committed)
	return err
}

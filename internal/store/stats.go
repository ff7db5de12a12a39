package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Stats is what is stored: messages, segments, and frame bytes as written
// (before compression).
type Stats struct {
	Messages int64
	Segments int64
	Bytes    int64
}

// PartitionStats counts what each of pids stores (lethe.store_partition_stats,
// the definition read models use too). Partitions storing nothing are
// present with zero counts.
func PartitionStats(ctx context.Context, q Querier, pids []uuid.UUID) (map[uuid.UUID]Stats, error) {
	rows, err := q.Query(ctx, `
		SELECT u.id, st.messages, st.segments, st.bytes
		  FROM unnest($1::uuid[]) AS u(id), lethe.store_partition_stats(u.id) st`, pids)
	if err != nil {
		return nil, fmt.Errorf("count stored messages: %w", err)
	}
	out := make(map[uuid.UUID]Stats, len(pids))
	var id uuid.UUID
	var st Stats
	_, err = pgx.ForEachRow(rows, []any{&id, &st.Messages, &st.Segments, &st.Bytes}, func() error {
		out[id] = st
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("count stored messages: %w", err)
	}
	return out, nil
}

// QueueStats counts what each queue of queueIDs stores, over its
// partitions.
func QueueStats(ctx context.Context, q Querier, queueIDs []int64) (map[int64]Stats, error) {
	rows, err := q.Query(ctx, `
		SELECT p.queue_id, sum(st.messages)::bigint, sum(st.segments)::bigint, sum(st.bytes)::bigint
		  FROM lethe.partitions p, lethe.store_partition_stats(p.id) st
		 WHERE p.queue_id = ANY ($1::bigint[])
		 GROUP BY p.queue_id`, queueIDs)
	if err != nil {
		return nil, fmt.Errorf("count stored messages: %w", err)
	}
	out := make(map[int64]Stats, len(queueIDs))
	var id int64
	var st Stats
	_, err = pgx.ForEachRow(rows, []any{&id, &st.Messages, &st.Segments, &st.Bytes}, func() error {
		out[id] = st
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("count stored messages: %w", err)
	}
	return out, nil
}

// Totals counts everything stored, and the transaction-id hashes kept for
// deduplication.
func Totals(ctx context.Context, q Querier) (st Stats, hashes int64, err error) {
	err = q.QueryRow(ctx, `
		SELECT coalesce(sum(s.frame_count), 0)::bigint, count(*), coalesce(sum(s.byte_size), 0)::bigint,
		       (SELECT coalesce(sum(cardinality(t.hashes)), 0)::bigint FROM lethe.txns t)
		  FROM lethe.segments s`).Scan(&st.Messages, &st.Segments, &st.Bytes, &hashes)
	if err != nil {
		return st, 0, fmt.Errorf("count stored messages: %w", err)
	}
	return st, hashes, nil
}

// HashCounts counts the transaction-id hashes a queue keeps for
// deduplication, and how many of them were stored before cutoff (what a
// sidecar purge with that cutoff removes).
func HashCounts(ctx context.Context, q Querier, queueID int64, cutoff time.Time) (total, before int64, err error) {
	err = q.QueryRow(ctx, `
		SELECT coalesce(sum(cardinality(t.hashes)), 0)::bigint,
		       coalesce(sum(cardinality(t.hashes)) FILTER (WHERE t.created_at < $2), 0)::bigint
		  FROM lethe.txns t JOIN lethe.partitions p ON p.id = t.partition_id
		 WHERE p.queue_id = $1`, queueID, cutoff).Scan(&total, &before)
	if err != nil {
		return 0, 0, fmt.Errorf("count transaction hashes of queue %d: %w", queueID, err)
	}
	return total, before, nil
}

// DiskBytes is the on-disk size of the stored log (lethe.store_disk_bytes):
// compressed, and read without a scan.
func DiskBytes(ctx context.Context, q Querier) (int64, error) {
	var n int64
	if err := q.QueryRow(ctx, `SELECT lethe.store_disk_bytes()`).Scan(&n); err != nil {
		return 0, fmt.Errorf("size of the stored log: %w", err)
	}
	return n, nil
}

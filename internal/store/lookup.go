package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/internal/frame"
)

// TxnOffset resolves a transaction id to the offset it was stored at in
// partition pid: an id lethe minted by decoding it (MintedOffset; found
// when that offset was given), a producer's through the sidecar. found is
// false when it was never stored or its hash was purged past the
// deduplication window.
func TxnOffset(ctx context.Context, q Querier, pid uuid.UUID, txnID string) (offset int64, found bool, err error) {
	if off, ok := MintedOffset(pid, txnID); ok {
		var next int64
		err := q.QueryRow(ctx, `SELECT next_offset FROM lethe.partitions WHERE id = $1`, pid).Scan(&next)
		if errors.Is(err, pgx.ErrNoRows) {
			return 0, false, nil
		}
		if err != nil {
			return 0, false, fmt.Errorf("resolve a transaction id in partition %s: %w", pid, err)
		}
		return off, off < next, nil
	}
	var off *int64
	if err := q.QueryRow(ctx, `SELECT lethe.txn_offset($1, $2)`, pid, TxnHash(txnID)).Scan(&off); err != nil {
		return 0, false, fmt.Errorf("resolve a transaction id in partition %s: %w", pid, err)
	}
	if off == nil {
		return 0, false, nil
	}
	return *off, true, nil
}

// OffsetAt returns the first offset of pid whose message was created at or
// after t, or the partition's next offset when there is none. Where the
// segment that answers is damaged, it answers the segment's first offset:
// a seek may replay a little more, never skip a message.
//
// The segment is lethe.store_offset_since's (migration 152), which looks
// from the tail first: a subscription that starts now costs what was
// appended since, not a scan of the partition's history.
func OffsetAt(ctx context.Context, q Querier, pid uuid.UUID, t time.Time) (int64, error) {
	var s Segment
	err := q.QueryRow(ctx, `
		SELECT s.base_offset, s.last_offset, s.frames FROM lethe.segments s
		 WHERE s.partition_id = $1 AND s.base_offset = (SELECT lethe.store_offset_since($1, $2))`,
		pid, t).Scan(&s.Base, &s.Last, &s.Frames)
	if errors.Is(err, pgx.ErrNoRows) {
		h, err := ReadHead(ctx, q, pid)
		return h.Next, err
	}
	if err != nil {
		return 0, fmt.Errorf("seek partition %s: %w", pid, err)
	}
	found := s.Base
	_ = frame.Walk(s.Frames, func(i int, m frame.Message) bool {
		if !m.CreatedAt.Before(t) {
			found = s.Base + int64(i)
			return false
		}
		return true
	})
	return found, nil
}

// Head is where a partition's stored messages begin and end.
type Head struct {
	// First is the first offset of the first stored segment; valid when
	// Empty is false.
	First int64
	// Next is the offset the next append gets.
	Next int64
	// Empty says nothing is stored.
	Empty bool
}

// ReadHead returns the head of partition pid, or ErrPartitionGone.
func ReadHead(ctx context.Context, q Querier, pid uuid.UUID) (Head, error) {
	var h Head
	var first *int64
	err := q.QueryRow(ctx, `
		SELECT p.next_offset,
		       (SELECT s.base_offset FROM lethe.segments s WHERE s.partition_id = p.id ORDER BY s.base_offset LIMIT 1)
		  FROM lethe.partitions p WHERE p.id = $1`, pid).Scan(&h.Next, &first)
	if errors.Is(err, pgx.ErrNoRows) {
		return h, ErrPartitionGone
	}
	if err != nil {
		return h, fmt.Errorf("read the head of partition %s: %w", pid, err)
	}
	h.Empty = first == nil
	if first != nil {
		h.First = *first
	}
	return h, nil
}

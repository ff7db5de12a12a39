// Package storetest writes what lethe itself never writes: segments whose
// bytes are damaged, or gaps where retention would not leave one, so that
// tests of every reader can check that stored data cannot break them. It
// lives beside the store because it is the store's layout it writes.
package storetest

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/lethe-mq/lethe/internal/store"
)

// Segment is one segment to write verbatim.
type Segment struct {
	Partition uuid.UUID
	// Base is the first offset; the segment claims Count offsets from it.
	Base  int64
	Count int
	// Frames is stored as is: valid frames, or not.
	Frames []byte
	// Hashes go to the sidecar (TxnHash of each frame's transaction id),
	// so acks and deduplication find them; may be empty.
	Hashes  []int64
	FirstAt time.Time
	LastAt  time.Time
	// Tier is where the segment is stored (empty: its queue's tier), and
	// AppendedAt the time that places it in a leaf (zero: LastAt).
	Tier       string
	AppendedAt time.Time
}

// Write stores seg bypassing lethe.append, and moves the partition's
// next_offset past it (and last_push_at to its LastAt) when it ends
// beyond.
func Write(ctx context.Context, q store.Querier, seg Segment) error {
	last := seg.Base + int64(seg.Count) - 1
	at := seg.AppendedAt
	if at.IsZero() {
		at = seg.LastAt
	}
	tier := seg.Tier
	if tier == "" {
		if err := q.QueryRow(ctx, `SELECT q.retention_tier FROM lethe.partitions p JOIN lethe.queues q ON q.id = p.queue_id
			WHERE p.id = $1`, seg.Partition).Scan(&tier); err != nil {
			return fmt.Errorf("storetest: tier of %s: %w", seg.Partition, err)
		}
	}
	// The leaf first, in a statement of its own: an insert routes its rows
	// by the leaves that existed when it started.
	if _, err := q.Exec(ctx, `SELECT lethe.ensure_leaf($1, $2)`, tier, at); err != nil {
		return fmt.Errorf("storetest: leaf for segment %d of %s: %w", seg.Base, seg.Partition, err)
	}
	if _, err := q.Exec(ctx, `
		INSERT INTO lethe.segments (partition_id, base_offset, last_offset, frame_count, first_at, last_at, byte_size,
		                            frames, tier, appended_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		seg.Partition, seg.Base, last, seg.Count, seg.FirstAt, seg.LastAt, len(seg.Frames), seg.Frames,
		tier, at); err != nil {
		return fmt.Errorf("storetest: write segment %d of %s: %w", seg.Base, seg.Partition, err)
	}
	if len(seg.Hashes) > 0 {
		if _, err := q.Exec(ctx, `SELECT lethe.ensure_leaf('txns', $1)`, seg.LastAt); err != nil {
			return fmt.Errorf("storetest: sidecar leaf for segment %d of %s: %w", seg.Base, seg.Partition, err)
		}
		if _, err := q.Exec(ctx, `INSERT INTO lethe.txns (partition_id, base_offset, created_at, hashes) VALUES ($1, $2, $3, $4)`,
			seg.Partition, seg.Base, seg.LastAt, seg.Hashes); err != nil {
			return fmt.Errorf("storetest: write hashes of segment %d of %s: %w", seg.Base, seg.Partition, err)
		}
	}
	if _, err := q.Exec(ctx, `
		UPDATE lethe.partitions SET next_offset = greatest(next_offset, $2 + 1),
		       last_push_at = greatest(last_push_at, $3)
		 WHERE id = $1`, seg.Partition, last, seg.LastAt); err != nil {
		return fmt.Errorf("storetest: move next_offset of %s: %w", seg.Partition, err)
	}
	return nil
}

// Remove deletes the segment of pid that starts at base, with its hashes,
// wherever it is: a gap in the middle of a partition, as a held area or a
// dropped time partition can leave.
func Remove(ctx context.Context, q store.Querier, pid uuid.UUID, base int64) error {
	if _, err := q.Exec(ctx, `DELETE FROM lethe.segments WHERE partition_id = $1 AND base_offset = $2`, pid, base); err != nil {
		return fmt.Errorf("storetest: remove segment %d of %s: %w", base, pid, err)
	}
	if _, err := q.Exec(ctx, `DELETE FROM lethe.txns WHERE partition_id = $1 AND base_offset = $2`, pid, base); err != nil {
		return fmt.Errorf("storetest: remove hashes of segment %d of %s: %w", base, pid, err)
	}
	return nil
}

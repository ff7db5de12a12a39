package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// Rules of the tier steps' audit rows (lethe.retention_history).
const (
	RuleTierMove        = "tier_move"
	RuleHeldMove        = "held_move"
	RuleTierChange      = "tier_change"
	RuleTierDrop        = "tier_drop"
	RuleHeldDrop        = "held_drop"
	RuleQuarantinePurge = "quarantine_purge"
)

// Moved is what one rule of a settle step did.
type Moved struct {
	Segments int64
	Frames   int64
	Bytes    int64
}

// Settled is one settle step: what each rule did, where to resume and
// whether the partition is done.
type Settled struct {
	ByRule map[string]Moved
	Next   int64
	Done   bool
}

// SettleBudgetBytes bounds the frames one settle step moves, so its lock
// hold and WAL burst stay short whatever the segments' size.
const SettleBudgetBytes = 8 << 20

// SettleStep settles, under partition pid's row lock, at most batch of its
// segments from offset from on (lethe.settle_step): those of leaf (the
// tier check, before the leaf drops), or, with leaf empty, those stored in
// tiers (a tier change). A segment the queue's tier keeps moves into it;
// else one with frames some group wants moves to the held area; else it
// stays for the leaf's drop, or, in a tier change, is deleted.
func SettleStep(ctx context.Context, q Querier, pid uuid.UUID, leaf string, tiers []string, from int64, batch int,
	now time.Time) (Settled, error) {
	var leafArg *string
	if leaf != "" {
		leafArg = &leaf
	}
	var tierArg []string
	if tiers != nil {
		tierArg = tiers
	}
	rows, err := q.Query(ctx, `SELECT rule, segments, frames, bytes, next_from, done
		FROM lethe.settle_step($1, $2, $3, $4, $5, $6, $7)`, pid, leafArg, tierArg, from, batch, SettleBudgetBytes, now)
	if err != nil {
		return Settled{}, fmt.Errorf("settle partition %s: %w", pid, err)
	}
	defer rows.Close()
	out := Settled{ByRule: map[string]Moved{}, Done: true}
	for rows.Next() {
		var rule *string
		var segs int32
		var m Moved
		var next *int64
		var done bool
		if err := rows.Scan(&rule, &segs, &m.Frames, &m.Bytes, &next, &done); err != nil {
			return Settled{}, fmt.Errorf("settle partition %s: %w", pid, err)
		}
		m.Segments = int64(segs)
		out.Done = out.Done && done
		if next != nil {
			out.Next = *next
		}
		if rule != nil {
			out.ByRule[*rule] = m
		}
	}
	if err := rows.Err(); err != nil {
		return Settled{}, fmt.Errorf("settle partition %s: %w", pid, err)
	}
	return out, nil
}

// SettleStart is where the tier check's settling of partition pid in leaf
// (of tier leafTier) may start; need is false when nothing of it can move
// (no group wants anything, and the queue's tier is the leaf's).
func SettleStart(ctx context.Context, q Querier, pid uuid.UUID, leaf, leafTier string) (from int64, need bool, err error) {
	var v *int64
	if err := q.QueryRow(ctx, `SELECT lethe.settle_start($1, $2, $3)`, pid, leaf, leafTier).Scan(&v); err != nil {
		return 0, false, fmt.Errorf("settle partition %s of %s: %w", pid, leaf, err)
	}
	if v == nil {
		return 0, false, nil
	}
	return max(*v, 0), true, nil
}

// Dropped is what dropping a leaf removes of one lethe partition.
type Dropped struct {
	Segments    int64
	Frames      int64
	Bytes       int64
	DeadLetters int64
	Done        bool
}

// DropPartitionStep writes, for lethe partition pid of a detached leaf,
// the audit row of what the drop removes (rule tier_drop or held_drop),
// purges up to batch of its dead letters when its queue says
// quarantined: purge, and moves its low watermark past what is gone
// (lethe.drop_partition_step). Done is false while dead letters are left.
func DropPartitionStep(ctx context.Context, q Querier, leaf string, pid uuid.UUID, rule string, batch int,
	now time.Time) (Dropped, error) {
	var d Dropped
	var segs, dl int32
	err := q.QueryRow(ctx, `SELECT segments, frames, bytes, dead_letters, done
		FROM lethe.drop_partition_step($1, $2, $3, $4, $5)`, leaf, pid, rule, batch, now).
		Scan(&segs, &d.Frames, &d.Bytes, &dl, &d.Done)
	if err != nil {
		return d, fmt.Errorf("drop partition %s of leaf %s: %w", pid, leaf, err)
	}
	d.Segments, d.DeadLetters = int64(segs), int64(dl)
	return d, nil
}

// QueueTierWork lists the partitions of queue queueID that store segments
// outside tiers keep (a running tier change's work).
func QueueTierWork(ctx context.Context, q Querier, queueID int64, outside []string) ([]uuid.UUID, error) {
	rows, err := q.Query(ctx, `
		SELECT p.id FROM lethe.partitions p
		 WHERE p.queue_id = $1
		   AND EXISTS (SELECT 1 FROM lethe.segments s WHERE s.partition_id = p.id AND s.tier = ANY ($2))
		 ORDER BY p.id`, queueID, outside)
	if err != nil {
		return nil, fmt.Errorf("partitions of queue %d outside its tier: %w", queueID, err)
	}
	defer rows.Close()
	var ids []uuid.UUID
	for rows.Next() {
		var id uuid.UUID
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("partitions of queue %d outside its tier: %w", queueID, err)
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// QueueLeft counts the messages of queue queueID stored in tiers.
func QueueLeft(ctx context.Context, q Querier, queueID int64, tiers []string) (int64, error) {
	var n int64
	err := q.QueryRow(ctx, `
		SELECT coalesce(sum(s.frame_count), 0)::bigint FROM lethe.partitions p
		  JOIN lethe.segments s ON s.partition_id = p.id
		 WHERE p.queue_id = $1 AND s.tier = ANY ($2)`, queueID, tiers).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("messages of queue %d left to settle: %w", queueID, err)
	}
	return n, nil
}

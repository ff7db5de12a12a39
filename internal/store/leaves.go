package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Leaf is one time partition of the stored log (Tier 1w, 3w, 7w, forever
// or held) or of the hash sidecar (Tier "txns"), as lethe.leaves records
// it.
type Leaf struct {
	Name  string
	Tier  string
	From  time.Time // zero for the upgrade's legacy leaves (from -infinity)
	To    time.Time
	State string // attached, detaching, detached
	// AuditedThrough is the last lethe partition whose audit row a drop
	// wrote; nil before the first.
	AuditedThrough *uuid.UUID
}

// Leaf states.
const (
	LeafAttached  = "attached"
	LeafDetaching = "detaching"
	LeafDetached  = "detached"
)

// TierTxns names the sidecar's leaves.
const TierTxns = "txns"

// Leaves lists every leaf, by tier and start.
func Leaves(ctx context.Context, q Querier) ([]Leaf, error) {
	rows, err := q.Query(ctx, `
		SELECT name, tier, CASE WHEN lo = '-infinity' THEN NULL ELSE lo END, hi, state, audited_through
		  FROM lethe.leaves ORDER BY tier, lo`)
	if err != nil {
		return nil, fmt.Errorf("list leaves: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Leaf, error) {
		var l Leaf
		var from *time.Time
		err := r.Scan(&l.Name, &l.Tier, &from, &l.To, &l.State, &l.AuditedThrough)
		if from != nil {
			l.From = *from
		}
		return l, err
	})
	if err != nil {
		return nil, fmt.Errorf("list leaves: %w", err)
	}
	return out, nil
}

// EnsureLeaves creates, off the push path, the leaves of each of tiers
// holding now and the ahead leaves after it, where missing.
func EnsureLeaves(ctx context.Context, q Querier, tiers []string, now time.Time, ahead int) error {
	_, err := q.Exec(ctx, `SELECT lethe.ensure_leaves(t, $2, $3) FROM unnest($1::text[]) AS t`, tiers, now, ahead)
	if err != nil {
		return fmt.Errorf("create leaves ahead: %w", err)
	}
	return nil
}

// LeafPartitions lists up to limit lethe partitions with segments (or
// hashes) in leaf, in id order after after.
func LeafPartitions(ctx context.Context, q Querier, leaf string, after uuid.UUID, limit int) ([]uuid.UUID, error) {
	rows, err := q.Query(ctx, fmt.Sprintf(`
		SELECT DISTINCT s.partition_id FROM %s s WHERE s.partition_id > $1 ORDER BY 1 LIMIT $2`, ident(leaf)), after, limit)
	if err != nil {
		return nil, fmt.Errorf("partitions of leaf %s: %w", leaf, err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return nil, fmt.Errorf("partitions of leaf %s: %w", leaf, err)
	}
	return ids, nil
}

// LeafPending reports whether a leaf still holds a frame some consumer
// group of its queue wants (lethe.completed_bound).
func LeafPending(ctx context.Context, q Querier, leaf string) (bool, error) {
	var pending bool
	if err := q.QueryRow(ctx, `SELECT lethe.leaf_pending($1)`, leaf).Scan(&pending); err != nil {
		return false, fmt.Errorf("pending frames of leaf %s: %w", leaf, err)
	}
	return pending, nil
}

// LeafEmpty reports whether a leaf holds no row.
func LeafEmpty(ctx context.Context, q Querier, leaf string) (bool, error) {
	var hasRows bool
	if err := q.QueryRow(ctx, fmt.Sprintf(`SELECT EXISTS (SELECT 1 FROM %s)`, ident(leaf))).Scan(&hasRows); err != nil {
		return false, fmt.Errorf("rows of leaf %s: %w", leaf, err)
	}
	return !hasRows, nil
}

// LeafHashes counts the transaction-id hashes a sidecar leaf holds.
func LeafHashes(ctx context.Context, q Querier, leaf string) (int64, error) {
	var n int64
	if err := q.QueryRow(ctx, fmt.Sprintf(`SELECT coalesce(sum(cardinality(t.hashes)), 0)::bigint FROM %s t`, ident(leaf))).
		Scan(&n); err != nil {
		return 0, fmt.Errorf("hashes of leaf %s: %w", leaf, err)
	}
	return n, nil
}

// DetachLeaf takes leaf out of its parent without an ACCESS EXCLUSIVE lock
// on the parent: DETACH PARTITION ... CONCURRENTLY (SHARE UPDATE
// EXCLUSIVE; appends and reads go on), or FINALIZE when a crash left one
// half done. It records the leaf as detaching first and detached after,
// so a drop resumes where it stopped. q must not be in a transaction.
func DetachLeaf(ctx context.Context, q Querier, leaf string) error {
	if _, err := q.Exec(ctx, `UPDATE lethe.leaves SET state = 'detaching' WHERE name = $1 AND state = 'attached'`, leaf); err != nil {
		return fmt.Errorf("detach leaf %s: %w", leaf, err)
	}
	var parent string
	var pending *bool
	err := q.QueryRow(ctx, `
		SELECT l.parent, (SELECT i.inhdetachpending FROM pg_inherits i WHERE i.inhrelid = to_regclass('lethe.' || l.name))
		  FROM lethe.leaves l WHERE l.name = $1`, leaf).Scan(&parent, &pending)
	if err != nil {
		return fmt.Errorf("detach leaf %s: %w", leaf, err)
	}
	if pending != nil {
		how := "CONCURRENTLY"
		if *pending {
			how = "FINALIZE"
		}
		if _, err := q.Exec(ctx, fmt.Sprintf(`ALTER TABLE %s DETACH PARTITION %s %s`, ident(parent), ident(leaf), how)); err != nil {
			return fmt.Errorf("detach leaf %s: %w", leaf, err)
		}
	}
	if _, err := q.Exec(ctx, `UPDATE lethe.leaves SET state = 'detached' WHERE name = $1`, leaf); err != nil {
		return fmt.Errorf("detach leaf %s: %w", leaf, err)
	}
	return nil
}

// DropLeaf drops a detached leaf and its record, and answers the bytes
// its files held just before (pg_total_relation_size: heap, TOAST and
// indexes; 0 when a crash had dropped the table already).
func DropLeaf(ctx context.Context, q Querier, leaf string) (int64, error) {
	var state string
	var bytes int64
	if err := q.QueryRow(ctx, `
		SELECT l.state, coalesce(pg_total_relation_size(to_regclass(format('lethe.%I', l.name))), 0)
		  FROM lethe.leaves l WHERE l.name = $1`, leaf).Scan(&state, &bytes); err != nil {
		return 0, fmt.Errorf("drop leaf %s: %w", leaf, err)
	}
	if state != LeafDetached {
		return 0, fmt.Errorf("drop leaf %s: it is %s, not detached", leaf, state)
	}
	if _, err := q.Exec(ctx, fmt.Sprintf(`DROP TABLE IF EXISTS %s`, ident(leaf))); err != nil {
		return 0, fmt.Errorf("drop leaf %s: %w", leaf, err)
	}
	if _, err := q.Exec(ctx, `DELETE FROM lethe.leaves WHERE name = $1`, leaf); err != nil {
		return 0, fmt.Errorf("drop leaf %s: %w", leaf, err)
	}
	return bytes, nil
}

// ident quotes a leaf (or parent) of the lethe schema.
func ident(name string) string { return pgx.Identifier{"lethe", name}.Sanitize() }

// SegmentTables lists the tables that hold segments as the catalog knows
// them (every leaf of the partitioned segments table, attached ones only),
// for checks that need each table's indexes rather than lethe.leaves'
// record of it.
func SegmentTables(ctx context.Context, q Querier) ([]string, error) {
	rows, err := q.Query(ctx, `
		SELECT c.relname::text FROM pg_partition_tree('lethe.segments') pt JOIN pg_class c ON c.oid = pt.relid
		 WHERE pt.isleaf ORDER BY 1`)
	if err != nil {
		return nil, fmt.Errorf("list the segment tables: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

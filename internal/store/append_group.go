package store

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
)

// appendGroupSQL writes a commit group's segments with one statement per
// step (lethe.append_segments, migration 153).
const appendGroupSQL = `SELECT lethe.append_segments($1, $2, $3, $4, $5, $6, $7, $8, $9)`

// appendGroupMintedSQL is appendGroupSQL for a group none of whose frames
// carries a producer's id, so no sidecar lookup or row: the same partition
// row locks (in lock order: the LockRows node sits above the sort), segment
// rows and next_offset moves in one statement instead of a PL/pgSQL call,
// which costs PostgreSQL half as much again (BENCHMARKS). All or nothing:
// when a partition is gone or a leaf a segment belongs in is not made yet
// it writes nothing and answers NULL, and lethe.append_segments follows.
const appendGroupMintedSQL = `
WITH u AS (
    SELECT * FROM unnest($1::uuid[], $2::int[], $3::bytea[], $4::timestamptz[], $5::timestamptz[])
        AS u(id, n, blob, first_at, last_at)),
p AS (
    SELECT p.id, p.next_offset, q.retention_tier AS tier,
           greatest($6::timestamptz, coalesce(p.last_push_at, $6::timestamptz)) AS at
      FROM lethe.partitions p JOIN lethe.queues q ON q.id = p.queue_id
     WHERE p.id = ANY ($1::uuid[])
     ORDER BY p.id
       FOR UPDATE OF p),
ready AS (
    SELECT count(*) = cardinality($1::uuid[])
           AND bool_and(to_regclass('lethe.' || lethe.leaf_name(p.tier, p.at)) IS NOT NULL) AS ok
      FROM p),
w AS (
    SELECT p.id, p.next_offset, p.tier, p.at, u.n, u.blob, u.first_at, u.last_at
      FROM p JOIN u ON u.id = p.id
     WHERE (SELECT ok FROM ready)),
ins AS (
    INSERT INTO lethe.segments (partition_id, base_offset, last_offset, frame_count,
                                first_at, last_at, byte_size, frames, tier, appended_at)
    SELECT w.id, w.next_offset, w.next_offset + w.n - 1, w.n, w.first_at, w.last_at, length(w.blob), w.blob, w.tier, w.at
      FROM w
    RETURNING partition_id, base_offset),
upd AS (
    UPDATE lethe.partitions t SET next_offset = w.next_offset + w.n, last_push_at = w.at
      FROM w WHERE t.id = w.id)
SELECT array_agg(base_offset ORDER BY partition_id) FROM ins`

// LockOrder is the order in which every writer of several partitions locks
// their rows (commit groups, transactions, stream cycles), so that no two of
// them can deadlock: partition ids by their bytes.
func LockOrder(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) }

// AppendGroup stores each of batches as one segment at the end of its
// partition, pids[i] for batches[i], in one call that commits with q's
// transaction (or alone). The pids must be distinct and in LockOrder. It
// handles the common case only: when a partition is gone or some producer
// id may be stored already, it writes nothing and answers ok false, and
// the caller appends each batch on its own (Append), which answers
// duplicates and gone partitions one partition at a time.
func AppendGroup(ctx context.Context, q Querier, pids []uuid.UUID, batches []*Batch, now time.Time) (out [][]Appended, ok bool, err error) {
	if !slices.IsSortedFunc(pids, LockOrder) {
		return nil, false, fmt.Errorf("append group: partitions not in lock order")
	}
	g := groupArgsOf(batches)
	var bases []int64
	if len(g.hashes) == 0 {
		if err := q.QueryRow(ctx, appendGroupMintedSQL, pids, g.counts, g.blobs, g.firstAt, g.lastAt, now).Scan(&bases); err != nil {
			return nil, false, fmt.Errorf("append a group of %d partitions: %w", len(pids), err)
		}
	}
	// With producer ids, or when the one statement wrote nothing (a
	// partition gone, a leaf not made yet: lethe.append_segments makes it).
	if bases == nil {
		if err := q.QueryRow(ctx, appendGroupSQL, pids, g.counts, g.idCounts, g.hashes, g.positions, g.blobs, g.firstAt, g.lastAt, now).Scan(&bases); err != nil {
			return nil, false, fmt.Errorf("append a group of %d partitions: %w", len(pids), err)
		}
	}
	if bases == nil {
		return nil, false, nil
	}
	out = make([][]Appended, len(batches))
	for i, b := range batches {
		out[i] = b.results(&bases[i], nil, nil)
	}
	return out, true, nil
}

// groupArgs are a group's batches as lethe.append_group's arrays.
type groupArgs struct {
	// counts[i] is batch i's frames, idCounts[i] those with a producer's
	// id, whose hashes and positions are batch i's share of the two.
	counts, idCounts []int32
	hashes           []int64
	positions        []int32
	blobs            [][]byte
	firstAt, lastAt  []time.Time
}

func groupArgsOf(batches []*Batch) groupArgs {
	g := groupArgs{counts: make([]int32, len(batches)), idCounts: make([]int32, len(batches)), blobs: make([][]byte, len(batches)),
		firstAt: make([]time.Time, len(batches)), lastAt: make([]time.Time, len(batches))}
	for i, b := range batches {
		g.counts[i], g.idCounts[i] = int32(len(b.lens)), int32(len(b.hashes))
		g.hashes = append(g.hashes, b.hashes...)
		g.positions = append(g.positions, b.positions...)
		g.blobs[i], g.firstAt[i], g.lastAt[i] = b.blob, b.firstAt, b.lastAt
	}
	return g
}

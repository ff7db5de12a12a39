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

// LockOrder is the order in which every writer of several partitions locks
// their rows (commit groups, transactions, stream cycles), so that no two of
// them can deadlock: partition ids by their bytes.
func LockOrder(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) }

// AppendGroup stores each of batches as one segment at the end of its
// partition, pids[i] for batches[i], in one call that commits with q's
// transaction (or alone). The pids must be distinct and in LockOrder. It handles the common case only: when a partition is
// gone or some producer id may be stored already, it writes nothing and
// answers ok false, and the caller appends each batch on its own (Append),
// which answers duplicates and gone partitions one partition at a time.
func AppendGroup(ctx context.Context, q Querier, pids []uuid.UUID, batches []*Batch, now time.Time) (out [][]Appended, ok bool, err error) {
	if !slices.IsSortedFunc(pids, LockOrder) {
		return nil, false, fmt.Errorf("append group: partitions not in lock order")
	}
	g := groupArgsOf(batches)
	var bases []int64
	if err := q.QueryRow(ctx, appendGroupSQL, pids, g.counts, g.idCounts, g.hashes, g.positions, g.blobs, g.firstAt, g.lastAt, now).Scan(&bases); err != nil {
		return nil, false, fmt.Errorf("append a group of %d partitions: %w", len(pids), err)
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

package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lethe-mq/lethe/internal/frame"
)

// Batch is the frames of one append to one partition, in order. Frames are
// concatenated as they are added, and a transaction id repeated within the
// batch is kept once and answered as a duplicate of its first occurrence,
// so the database stores the batch as one segment without per-frame work.
type Batch struct {
	// hashes are the ids of the frames whose producer gave one (Add), and
	// positions[i] the frame hashes[i] names, 1-based among those sent.
	hashes    []int64
	positions []int32
	lens      []int32
	blob      []byte
	firstAt   time.Time
	lastAt    time.Time
	// repeatOf[i] is the position of the first frame added with the same
	// hash as frame i, or -1; sent maps a stored frame to its position.
	repeatOf []int
	sent     []int
	first    map[int64]int
}

// NewBatch returns a batch sized for frames frames of bytes bytes in all.
func NewBatch(frames, bytes int) *Batch {
	// hashes and positions grow only with producers' ids; empty, not nil,
	// so lethe.append_segment is given empty arrays, never NULL.
	return &Batch{
		hashes:    []int64{},
		positions: []int32{},
		lens:      make([]int32, 0, frames),
		blob:      make([]byte, 0, bytes),
		repeatOf:  make([]int, 0, frames),
		sent:      make([]int, 0, frames),
	}
}

// Add appends one encoded frame whose transaction id a producer chose, with
// the id's hash (TxnHash) and the frame's creation time. The id is looked
// up in the sidecar and stored there.
func (b *Batch) Add(hash int64, f []byte, at time.Time) { b.addEncoded(hash, f, at, true) }

// AddMinted is Add for a frame without an id: lethe names it by its offset
// (MintedID), so it is neither looked up nor stored in the sidecar.
func (b *Batch) AddMinted(f []byte, at time.Time) { b.addEncoded(0, f, at, false) }

func (b *Batch) addEncoded(hash int64, f []byte, at time.Time, hasID bool) {
	if b.admit(hash, at, hasID) {
		b.lens = append(b.lens, int32(len(f)))
		b.blob = append(b.blob, f...)
	}
}

// AddMessage is Add, or AddMinted when minted, for a message the batch
// encodes itself, straight into the segment: a pushed payload is copied
// once after the request body, here.
func (b *Batch) AddMessage(hash int64, m frame.Message, minted bool) {
	if b.admit(hash, m.CreatedAt, !minted) {
		n := len(b.blob)
		b.blob = frame.Append(b.blob, m)
		b.lens = append(b.lens, int32(len(b.blob)-n))
	}
}

// admit records the next frame's place and says whether its bytes are
// stored: not when its id repeats one earlier in the batch.
func (b *Batch) admit(hash int64, at time.Time, hasID bool) bool {
	pos := len(b.repeatOf)
	if hasID {
		if j, ok := b.first[hash]; ok {
			b.repeatOf = append(b.repeatOf, j)
			return false
		}
		if b.first == nil {
			b.first = make(map[int64]int, cap(b.repeatOf))
		}
		b.first[hash] = pos
		b.hashes = append(b.hashes, hash)
		b.positions = append(b.positions, int32(len(b.sent)+1))
	}
	b.repeatOf = append(b.repeatOf, -1)
	b.sent = append(b.sent, pos)
	if len(b.sent) == 1 || at.Before(b.firstAt) {
		b.firstAt = at
	}
	if len(b.sent) == 1 || at.After(b.lastAt) {
		b.lastAt = at
	}
	return true
}

// Len is the number of frames added.
func (b *Batch) Len() int { return len(b.repeatOf) }

// Appended is the outcome of one frame of a batch.
type Appended struct {
	Offset int64
	// Duplicate says the transaction id was stored before (or earlier in
	// the batch); Offset is then where it was first stored.
	Duplicate bool
}

// appendSQL is one segment's append: partition row lock, one sidecar lookup
// of the producers' ids, one segment row (lethe.append_segment, migration
// 153).
const appendSQL = `SELECT base_offset, dup_idx, dup_offsets FROM lethe.append_segment($1, $2, $3, $4, $5, $6, $7, $8)`

// appendMintedSQL is appendSQL for a segment with no producer's id, so no
// sidecar lookup or row: the same partition row lock, segment row and
// next_offset as lethe.append_segment, in one statement instead of a
// PL/pgSQL call, which costs PostgreSQL a third more (BENCHMARKS). It
// answers no row when the partition is gone or the leaf the segment
// belongs in is not made yet; lethe.append_segment then answers or makes
// it. It is appendGroupMintedSQL for one partition without the arrays:
// a group of one through that statement took 0.310 against 0.275 ms a
// call (pgbench, five alternating runs), on the path of every lone push.
const appendMintedSQL = `
WITH p AS (
    SELECT p.id, p.next_offset, q.retention_tier AS tier,
           greatest($5::timestamptz, coalesce(p.last_push_at, $5::timestamptz)) AS at
      FROM lethe.partitions p JOIN lethe.queues q ON q.id = p.queue_id
     WHERE p.id = $1
       FOR UPDATE OF p),
leaf AS (
    SELECT * FROM p WHERE to_regclass('lethe.' || lethe.leaf_name(p.tier, p.at)) IS NOT NULL),
ins AS (
    INSERT INTO lethe.segments (partition_id, base_offset, last_offset, frame_count,
                                first_at, last_at, byte_size, frames, tier, appended_at)
    SELECT leaf.id, leaf.next_offset, leaf.next_offset + $6::int - 1, $6::int,
           $3, $4, length($2::bytea), $2::bytea, leaf.tier, leaf.at
      FROM leaf
    RETURNING base_offset),
upd AS (
    UPDATE lethe.partitions t SET next_offset = leaf.next_offset + $6::int, last_push_at = leaf.at
      FROM leaf WHERE t.id = leaf.id)
SELECT base_offset FROM ins`

// Append stores b as one segment at the end of partition pid in one round
// trip and answers one Appended per frame added, in order. It runs on q, so
// it commits with the caller's transaction when q is one.
func Append(ctx context.Context, q Querier, pid uuid.UUID, b *Batch, now time.Time) ([]Appended, error) {
	if b.Len() == 0 {
		return nil, nil
	}
	if len(b.hashes) == 0 {
		var base int64
		err := q.QueryRow(ctx, appendMintedSQL, pid, b.blob, b.firstAt, b.lastAt, now, len(b.lens)).Scan(&base)
		if err == nil {
			return b.results(&base, nil, nil), nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return nil, fmt.Errorf("append to partition %s: %w", pid, err)
		}
		// The partition is gone or its leaf is not made yet: nothing was
		// written, and lethe.append_segment tells which.
	}
	return b.decode(pid, q.QueryRow(ctx, appendSQL, pid, b.hashes, b.positions, b.lens, b.blob, b.firstAt, b.lastAt, now))
}

// QueueAppend queues b's append to partition pid on batch, so that the
// appends of a commit group travel in one round trip instead of one each;
// done receives the outcome when the batch's results are read (before
// SendBatch's Close returns). An empty b is answered at once.
func QueueAppend(batch *pgx.Batch, pid uuid.UUID, b *Batch, now time.Time, done func([]Appended, error)) {
	if b.Len() == 0 {
		done(nil, nil)
		return
	}
	batch.Queue(appendSQL, pid, b.hashes, b.positions, b.lens, b.blob, b.firstAt, b.lastAt, now).QueryRow(func(row pgx.Row) error {
		out, err := b.decode(pid, row)
		done(out, err)
		return err
	})
}

// decode reads lethe.append's answer into one Appended per frame added.
func (b *Batch) decode(pid uuid.UUID, row pgx.Row) ([]Appended, error) {
	var base *int64
	var dupIdx []int32
	var dupOffsets []int64
	if err := row.Scan(&base, &dupIdx, &dupOffsets); err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "P0002" {
			return nil, ErrPartitionGone
		}
		return nil, fmt.Errorf("append to partition %s: %w", pid, err)
	}
	return b.results(base, dupIdx, dupOffsets), nil
}

// results is one Appended per frame added, for a segment stored from
// offset *base (nil: none stored) whose frames dupIdx (1-based, of those
// sent) were found stored before at dupOffsets.
func (b *Batch) results(base *int64, dupIdx []int32, dupOffsets []int64) []Appended {
	out := make([]Appended, b.Len())
	for k, j := range dupIdx {
		out[b.sent[j-1]] = Appended{Offset: dupOffsets[k], Duplicate: true}
	}
	next := int64(0)
	if base != nil {
		next = *base
	}
	for _, at := range b.sent {
		if !out[at].Duplicate {
			out[at].Offset = next
			next++
		}
	}
	for at, j := range b.repeatOf {
		if j >= 0 {
			out[at] = Appended{Offset: out[j].Offset, Duplicate: true}
		}
	}
	return out
}

package store

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/internal/frame"
)

// Frame is one stored message and its offset; its TxnID is the producer's,
// or MintedID's when the producer gave none. When the offset is stored
// but its frame cannot be decoded (the segment is damaged), Err wraps
// ErrUnreadable with the cause and Message is empty.
type Frame struct {
	Offset int64
	frame.Message
	Err error
}

// Segment is one stored row as the decoder needs it: a row of
// lethe.read_segments, which a claim reads with its cursor's lock and
// decodes with DecodeSegments.
type Segment struct {
	Base, Last int64
	LastAt     time.Time
	Frames     []byte
}

// Read returns up to limit frames of partition pid with offsets from from on,
// in offset order, stopping before the first frame created after
// visibleBefore (delayed processing; Everything() hides nothing), and
// before the first frame whose payloads before it reach maxBytes (the
// first frame always comes; 0: no byte bound). Offsets that are not stored
// are skipped: a reader never assumes contiguity. Frames alias a buffer
// per segment that the caller owns.
func Read(ctx context.Context, q Querier, pid uuid.UUID, from int64, limit int, maxBytes int64, visibleBefore time.Time) ([]Frame, error) {
	if limit <= 0 {
		return nil, nil
	}
	rows, err := q.Query(ctx, readSQL, pid, from, limit, ReadBytesBound(maxBytes))
	if err != nil {
		return nil, fmt.Errorf("read partition %s: %w", pid, err)
	}
	segs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Segment, error) {
		var s Segment
		err := r.Scan(&s.Base, &s.Last, &s.LastAt, &s.Frames)
		return s, err
	})
	if err != nil {
		return nil, fmt.Errorf("read partition %s: %w", pid, err)
	}
	return DecodeSegments(pid, from, limit, maxBytes, visibleBefore, segs), nil
}

// readSQL finds the segment holding from (or the first one after a gap),
// then reads only as many more as the cumulative frame count and byte size
// need (lethe.read_segments, migrations 156 and 157: a claim calls it in
// the statement that locks its cursor).
const readSQL = `SELECT base_offset, last_offset, last_at, frames FROM lethe.read_segments($1, $2, $3, $4)`

// ReadBytesBound is the byte bound lethe.read_segments is given for a
// read bounded by maxBytes (0 or less: none).
func ReadBytesBound(maxBytes int64) int64 {
	if maxBytes <= 0 {
		return math.MaxInt64
	}
	return maxBytes
}

// DecodeSegments returns what Read(pid, from, limit, maxBytes,
// visibleBefore) returns when its read found segs, which
// lethe.read_segments(pid, from, limit, maxBytes) gives, in any order (it
// sorts segs in place).
func DecodeSegments(pid uuid.UUID, from int64, limit int, maxBytes int64, visibleBefore time.Time, segs []Segment) []Frame {
	if limit <= 0 {
		return nil
	}
	slices.SortFunc(segs, func(a, b Segment) int { return cmp.Compare(a.Base, b.Base) })
	d := decoding{pid: pid, from: from, limit: limit, maxBytes: ReadBytesBound(maxBytes), visibleBefore: visibleBefore}
	for i := range segs {
		if d.segment(&segs[i]) {
			break
		}
	}
	return d.out
}

// decoding is one DecodeSegments: its bounds, and the frames and payload
// bytes taken so far.
type decoding struct {
	pid           uuid.UUID
	from          int64
	limit         int
	maxBytes      int64
	visibleBefore time.Time
	out           []Frame
	bytes         int64
}

// full says no further frame may be taken: the limit is reached, or the
// payloads taken reach the byte bound (after at least one frame, so a
// message larger than the bound is still served).
func (d *decoding) full() bool {
	return len(d.out) >= d.limit || (len(d.out) > 0 && d.bytes >= d.maxBytes)
}

// segment appends the frames of s with offsets from d.from on, until d is
// full or a frame is not visible yet; it answers whether the read is
// complete. Offsets of s that cannot be decoded are appended with Err set;
// they count as visible once the whole segment is, and carry no payload
// bytes.
func (d *decoding) segment(s *Segment) (stop bool) {
	next := s.Base
	walkErr := frame.Walk(s.Frames, func(i int, m frame.Message) bool {
		off := s.Base + int64(i)
		if off > s.Last {
			return false // more frames than the row's offsets: not ours to serve
		}
		next = off + 1
		if off < d.from {
			return true
		}
		if d.full() || m.CreatedAt.After(d.visibleBefore) {
			stop = true
			return false
		}
		if m.TxnID == "" {
			m.TxnID = MintedID(d.pid, off) // no producer id: named by its place
		}
		d.out = append(d.out, Frame{Offset: off, Message: m})
		d.bytes += int64(len(m.Payload))
		return true
	})
	if stop || next > s.Last {
		return stop
	}
	cause := walkErr
	if cause == nil {
		cause = fmt.Errorf("%w: the segment's frames end at offset %d, its row says %d", frame.ErrCorrupt, next-1, s.Last)
	}
	damage := fmt.Errorf("%w: partition %s segment %d: %w", ErrUnreadable, d.pid, s.Base, cause)
	if s.LastAt.After(d.visibleBefore) {
		return true
	}
	for off := max(next, d.from); off <= s.Last; off++ {
		if d.full() {
			return true
		}
		d.out = append(d.out, Frame{Offset: off, Err: damage})
	}
	return false
}

// ReadAt returns the frame stored at offset of pid; found is false when
// that offset is not stored.
func ReadAt(ctx context.Context, q Querier, pid uuid.UUID, offset int64) (f Frame, found bool, err error) {
	frames, err := Read(ctx, q, pid, offset, 1, 0, farFuture)
	if err != nil || len(frames) == 0 || frames[0].Offset != offset {
		return Frame{}, false, err
	}
	return frames[0], true, nil
}

// farFuture makes every frame visible.
var farFuture = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// Everything is a visibility cut that hides nothing.
func Everything() time.Time { return farFuture }

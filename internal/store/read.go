package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

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

// segment is one stored row as the decoder needs it.
type segment struct {
	base, last int64
	lastAt     time.Time
	frames     []byte
}

// Read returns up to limit frames of partition pid with offsets from from on,
// in offset order, stopping before the first frame created after
// visibleBefore (delayed processing; Everything() hides nothing). Offsets
// that are not stored are skipped: a reader never assumes contiguity.
// Frames alias a buffer per segment that the caller owns.
func Read(ctx context.Context, q Querier, pid uuid.UUID, from int64, limit int, visibleBefore time.Time) ([]Frame, error) {
	if limit <= 0 {
		return nil, nil
	}
	rows, err := q.Query(ctx, readSQL, pid, from, limit)
	if err != nil {
		return nil, fmt.Errorf("read partition %s: %w", pid, err)
	}
	defer rows.Close()
	var out []Frame
	for rows.Next() {
		var s segment
		if err := rows.Scan(&s.base, &s.last, &s.lastAt, &s.frames); err != nil {
			return nil, fmt.Errorf("read partition %s: %w", pid, err)
		}
		var stop bool
		if out, stop = s.decode(pid, from, limit, visibleBefore, out); stop {
			break
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read partition %s: %w", pid, err)
	}
	return out, nil
}

// readSQL finds the segment holding from (or the first one after a gap),
// then reads only as many more as the cumulative frame count needs
// (lethe.read_segments, migration 156: a claim calls it in the statement
// that locks its cursor).
const readSQL = `SELECT base_offset, last_offset, last_at, frames FROM lethe.read_segments($1, $2, $3)`

// Segments are the rows of one lethe.read_segments call, aggregated into
// arrays by a caller that read them in a statement of its own (a claim,
// with its cursor's lock).
type Segments struct {
	Bases, Lasts []int64
	LastAts      []time.Time
	Frames       [][]byte
}

// Decode returns what Read(pid, from, limit, visibleBefore) returns when
// its read found segs, which lethe.read_segments(pid, from, limit) gave in
// any order.
func (segs Segments) Decode(pid uuid.UUID, from int64, limit int, visibleBefore time.Time) ([]Frame, error) {
	n := len(segs.Bases)
	if len(segs.Lasts) != n || len(segs.LastAts) != n || len(segs.Frames) != n {
		return nil, fmt.Errorf("read partition %s: %d segment offsets, %d ends, %d times, %d blobs",
			pid, n, len(segs.Lasts), len(segs.LastAts), len(segs.Frames))
	}
	if limit <= 0 {
		return nil, nil
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(segs.Bases[a], segs.Bases[b]) })
	var out []Frame
	for _, i := range order {
		s := segment{base: segs.Bases[i], last: segs.Lasts[i], lastAt: segs.LastAts[i], frames: segs.Frames[i]}
		var stop bool
		if out, stop = s.decode(pid, from, limit, visibleBefore, out); stop {
			break
		}
	}
	return out, nil
}

// decode appends to out the frames of s with offsets from from on, until
// out holds limit or a frame is not visible yet; stop says the read is
// complete. Offsets of s that cannot be decoded are appended with Err set;
// they count as visible once the whole segment is.
func (s *segment) decode(pid uuid.UUID, from int64, limit int, visibleBefore time.Time, out []Frame) ([]Frame, bool) {
	next, stop := s.base, false
	walkErr := frame.Walk(s.frames, func(i int, m frame.Message) bool {
		off := s.base + int64(i)
		if off > s.last {
			return false // more frames than the row's offsets: not ours to serve
		}
		next = off + 1
		if off < from {
			return true
		}
		if len(out) >= limit || m.CreatedAt.After(visibleBefore) {
			stop = true
			return false
		}
		if m.TxnID == "" {
			m.TxnID = MintedID(pid, off) // no producer id: named by its place
		}
		out = append(out, Frame{Offset: off, Message: m})
		return true
	})
	if stop || next > s.last {
		return out, stop
	}
	cause := walkErr
	if cause == nil {
		cause = fmt.Errorf("%w: the segment's frames end at offset %d, its row says %d", frame.ErrCorrupt, next-1, s.last)
	}
	damage := fmt.Errorf("%w: partition %s segment %d: %w", ErrUnreadable, pid, s.base, cause)
	if s.lastAt.After(visibleBefore) {
		return out, true
	}
	for off := max(next, from); off <= s.last; off++ {
		if len(out) >= limit {
			return out, true
		}
		out = append(out, Frame{Offset: off, Err: damage})
	}
	return out, false
}

// ReadAt returns the frame stored at offset of pid; found is false when
// that offset is not stored.
func ReadAt(ctx context.Context, q Querier, pid uuid.UUID, offset int64) (f Frame, found bool, err error) {
	frames, err := Read(ctx, q, pid, offset, 1, farFuture)
	if err != nil || len(frames) == 0 || frames[0].Offset != offset {
		return Frame{}, false, err
	}
	return frames[0], true, nil
}

// farFuture makes every frame visible.
var farFuture = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// Everything is a visibility cut that hides nothing.
func Everything() time.Time { return farFuture }

package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// SegmentRef names one stored segment: the unit a browse walks.
type SegmentRef struct {
	Partition uuid.UUID
	Base      int64
	Last      int64
	LastAt    time.Time
	Bytes     int
}

// SegmentFilter selects segments to browse. Nil fields do not filter. From
// and To keep segments that may hold a message created in [From, To].
type SegmentFilter struct {
	Queue     *int64
	Partition *uuid.UUID
	From, To  *time.Time
}

// ListSegments returns up to limit segments after the given one (nil: from
// the start) in browse order, newest first: by offset within one partition
// when the filter names one, else by last write time across partitions.
func ListSegments(ctx context.Context, q Querier, f SegmentFilter, after *SegmentRef, limit int) ([]SegmentRef, error) {
	const cols = `SELECT s.partition_id, s.base_offset, s.last_offset, s.last_at, s.byte_size FROM lethe.segments s`
	const times = ` AND ($2::timestamptz IS NULL OR s.last_at >= $2) AND ($3::timestamptz IS NULL OR s.first_at <= $3)`
	var rows pgx.Rows
	var err error
	if f.Partition != nil {
		before := int64(1<<63 - 1)
		if after != nil {
			before = after.Base
		}
		rows, err = q.Query(ctx, cols+` WHERE s.partition_id = $1`+times+` AND s.base_offset < $4
			 ORDER BY s.base_offset DESC LIMIT $5`, *f.Partition, f.From, f.To, before, limit)
	} else {
		var at *time.Time
		var pid *uuid.UUID
		var base *int64
		if after != nil {
			at, pid, base = &after.LastAt, &after.Partition, &after.Base
		}
		rows, err = q.Query(ctx, cols+` JOIN lethe.partitions p ON p.id = s.partition_id
			 WHERE ($1::bigint IS NULL OR p.queue_id = $1)`+times+`
			   AND ($4::timestamptz IS NULL OR (s.last_at, s.partition_id, s.base_offset) < ($4, $5::uuid, $6::bigint))
			 ORDER BY s.last_at DESC, s.partition_id DESC, s.base_offset DESC LIMIT $7`,
			f.Queue, f.From, f.To, at, pid, base, limit)
	}
	if err != nil {
		return nil, fmt.Errorf("list segments to browse: %w", err)
	}
	segs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (SegmentRef, error) {
		var s SegmentRef
		return s, r.Scan(&s.Partition, &s.Base, &s.Last, &s.LastAt, &s.Bytes)
	})
	if err != nil {
		return nil, fmt.Errorf("list segments to browse: %w", err)
	}
	return segs, nil
}

// ReadSegment returns every frame of one listed segment in offset order
// (damaged ones with Err set) and its stored size; found is false when it
// was removed since it was listed.
func ReadSegment(ctx context.Context, q Querier, ref SegmentRef) (frames []Frame, size int, found bool, err error) {
	s := Segment{Base: ref.Base}
	err = q.QueryRow(ctx, `SELECT last_offset, last_at, frames FROM lethe.segments WHERE partition_id = $1 AND base_offset = $2`,
		ref.Partition, ref.Base).Scan(&s.Last, &s.LastAt, &s.Frames)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, 0, false, nil
	}
	if err != nil {
		return nil, 0, false, fmt.Errorf("read segment %d of %s: %w", ref.Base, ref.Partition, err)
	}
	return DecodeSegments(ref.Partition, s.Base, int(s.Last-s.Base+1), 0, farFuture, []Segment{s}), len(s.Frames), true, nil
}

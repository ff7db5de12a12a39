package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/lethe-mq/lethe/internal/frame"
)

// storedFrame is a decoded frame and its offset.
type storedFrame struct {
	offset int64
	frame.Message
}

// readFrames returns up to max frames of pid from offset start on, in order,
// stopping before the first frame created after visibleBefore (delayed
// processing). Offsets that retention removed are skipped: the scan starts
// at the first segment that still exists.
func readFrames(ctx context.Context, q querier, pid uuid.UUID, start int64, max int, visibleBefore time.Time) ([]storedFrame, error) {
	// The segment holding start (or the first one after a gap), then only
	// as many more as the cumulative frame count needs, so a large batch
	// does not detoast segments it will not use.
	rows, err := q.Query(ctx, `
		WITH first AS (
			SELECT coalesce((SELECT s.base_offset FROM lethe.segments s
			                  WHERE s.partition_id = $1 AND s.base_offset <= $2
			                  ORDER BY s.base_offset DESC LIMIT 1), $2) AS base)
		SELECT w.base_offset, w.frames FROM (
			SELECT s.base_offset, s.frames,
			       sum(s.frame_count) OVER (ORDER BY s.base_offset) - s.frame_count AS before
			  FROM lethe.segments s, first
			 WHERE s.partition_id = $1 AND s.base_offset >= first.base AND s.last_offset >= $2
			 ORDER BY s.base_offset
			 LIMIT $3) w
		 WHERE w.before < $4 + ($2 - (SELECT base FROM first))
		 ORDER BY w.base_offset`, pid, start, max+1, max)
	if err != nil {
		return nil, fmt.Errorf("read partition %s: %w", pid, err)
	}
	defer rows.Close()
	var out []storedFrame
	stop := false
	for rows.Next() && !stop {
		var base int64
		var seg []byte
		if err := rows.Scan(&base, &seg); err != nil {
			return nil, fmt.Errorf("read partition %s: %w", pid, err)
		}
		err := frame.Walk(seg, func(i int, m frame.Message) bool {
			off := base + int64(i)
			if off < start {
				return true
			}
			if len(out) >= max || m.CreatedAt.After(visibleBefore) {
				stop = true
				return false
			}
			// Copy: m aliases seg, which the next Scan reuses.
			m.Payload = append([]byte(nil), m.Payload...)
			out = append(out, storedFrame{offset: off, Message: m})
			return true
		})
		if err != nil {
			return nil, fmt.Errorf("read partition %s segment %d: %w", pid, base, err)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read partition %s: %w", pid, err)
	}
	return out, nil
}

// offsetAt returns the first offset of pid whose frame was created at or
// after t, or the partition's next offset when there is none.
func offsetAt(ctx context.Context, q querier, pid uuid.UUID, t time.Time) (int64, error) {
	rows, err := q.Query(ctx, `
		SELECT s.base_offset, s.frames FROM lethe.segments s
		 WHERE s.partition_id = $1 AND s.last_at >= $2
		 ORDER BY s.base_offset LIMIT 1`, pid, t)
	if err != nil {
		return 0, fmt.Errorf("seek partition %s: %w", pid, err)
	}
	found := int64(-1)
	for rows.Next() {
		var base int64
		var seg []byte
		if err := rows.Scan(&base, &seg); err != nil {
			rows.Close()
			return 0, err
		}
		_ = frame.Walk(seg, func(i int, m frame.Message) bool {
			if !m.CreatedAt.Before(t) {
				found = base + int64(i)
				return false
			}
			return true
		})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("seek partition %s: %w", pid, err)
	}
	if found >= 0 {
		return found, nil
	}
	var next int64
	r2, err := q.Query(ctx, `SELECT next_offset FROM lethe.partitions WHERE id = $1`, pid)
	if err != nil {
		return 0, err
	}
	defer r2.Close()
	for r2.Next() {
		if err := r2.Scan(&next); err != nil {
			return 0, err
		}
	}
	return next, r2.Err()
}

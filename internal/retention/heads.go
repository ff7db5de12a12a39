package retention

import "time"

// headsMaxAge is how long the loop trusts the heads it remembers before it
// reads every head again. A head changes without its low watermark moving
// only while a queue deletion is under way (it deletes segments in no
// order, then the queue); if one fails halfway, this bounds how long the
// queue's oldest-age gauge may name a message that is gone.
const headsMaxAge = 10 * time.Minute

// heads are the head segments of the partitions of queues with no
// deleting rule, as a work list read them: for each partition the low
// watermark it had then and its head's first frame time, in parallel
// arrays as the work list takes them. Nothing but a deletion from the
// head changes a partition's head, and every such deletion moves the
// watermark, so the next work list reads again only the heads whose
// watermark moved (sql/worklist.sql says when it trusts none).
type heads struct {
	// ReadAt is the cycle's now when every head was last read.
	ReadAt time.Time
	// Partitions are ids as [16]byte, not uuid.UUID: pgx encodes and
	// decodes an array of them several times faster.
	Partitions [][16]byte
	Watermarks []int64
	FirstAt    []time.Time
}

// trusted answers h for the work list at now, or no heads when they are
// older than headsMaxAge (or from a clock set back): then it reads them
// all.
func (h heads) trusted(now time.Time) heads {
	if h.ReadAt.IsZero() || now.Before(h.ReadAt) || now.Sub(h.ReadAt) >= headsMaxAge {
		return heads{ReadAt: now}
	}
	return h
}

// add appends the heads of one queue.
func (h *heads) add(q heads) {
	h.Partitions = append(h.Partitions, q.Partitions...)
	h.Watermarks = append(h.Watermarks, q.Watermarks...)
	h.FirstAt = append(h.FirstAt, q.FirstAt...)
}

// rememberHeads collects the heads of a work list built from known, for
// the next one.
func rememberHeads(work []queueWork, known heads) heads {
	next := heads{ReadAt: known.ReadAt}
	for _, q := range work {
		next.add(q.heads)
	}
	return next
}

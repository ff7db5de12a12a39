// Package lease holds the rules of delivery to a consumer group on one
// partition: what a pop hands out, what an ack records, when a lease
// settles, how failures count toward retryLimit and when a message goes to
// the dead letters. It is plain Go over a cursor value: the engine loads a
// cursor, calls these functions, and stores the cursor and the dead letters
// they return. Nothing here reads a database or a clock.
package lease

import (
	"slices"
	"time"

	"github.com/google/uuid"
)

// Policy is what a queue's options say about delivery.
type Policy struct {
	LeaseTime  time.Duration
	RetryLimit int
	RetryDelay time.Duration
	// WindowBuffer holds a partition back until it went this long without
	// a push.
	WindowBuffer time.Duration
}

// Cursor is one consumer group's position and lease on one partition.
type Cursor struct {
	// Committed is the last offset the group is done with (-1: none).
	Committed int64
	Lease     Lease
	// RetryOffset is the message that failed last, RetryCount how often in
	// a row, RetryAfter when it may be delivered again (nil: now).
	RetryOffset *int64
	RetryCount  int
	RetryAfter  *time.Time
	// AckedAhead are offsets past Committed the group is already done with
	// (completed after an earlier message of their lease failed, or
	// dead-lettered as unreadable): never delivered again. Ascending.
	AckedAhead []int64
}

// Lease is the messages handed to one consumer, with the outcome of each.
type Lease struct {
	ID    uuid.UUID // uuid.Nil: no lease
	Until time.Time
	// Offsets are the delivered messages, ascending; Hashes[i] is the
	// transaction-id hash of Offsets[i], which an ack names.
	Offsets []int64
	Hashes  []int64
	Done    []int64
	Failed  []int64
	// Error is the reason the first failed message failed.
	Error string
}

// DeadLetter is a message the group gives up on: the engine copies it to
// the dead letters with this reason and retry count.
type DeadLetter struct {
	Offset  int64
	Reason  string
	Retries int
}

// Held says a lease exists (live or expired).
func (l *Lease) Held() bool { return l.ID != uuid.Nil }

// From and To are the first and last leased offsets.
func (l *Lease) From() int64 { return l.Offsets[0] }
func (l *Lease) To() int64   { return l.Offsets[len(l.Offsets)-1] }

// Complete says every leased message has an outcome.
func (l *Lease) Complete() bool {
	for _, o := range l.Offsets {
		if !l.hasOutcome(o) {
			return false
		}
	}
	return true
}

func (l *Lease) hasOutcome(o int64) bool {
	return slices.Contains(l.Done, o) || slices.Contains(l.Failed, o)
}

// Busy says another consumer holds a live lease: the group's next messages
// on this partition wait for it.
func (c *Cursor) Busy(now time.Time) bool { return c.Lease.Held() && c.Lease.Until.After(now) }

// IsDone says the group is done with offset: at or below Committed, or
// completed ahead of it.
func (c *Cursor) IsDone(offset int64) bool {
	return offset <= c.Committed || slices.Contains(c.AckedAhead, offset)
}

// RetriesOf is how often the message at offset failed in a row.
func (c *Cursor) RetriesOf(offset int64) int {
	if c.RetryOffset != nil && *c.RetryOffset == offset {
		return c.RetryCount
	}
	return 0
}

// Ready says the group may be handed messages of the partition now: no
// failed message is waiting out retryDelay, and the partition's window
// (windowBuffer after its last push) has closed.
func Ready(c *Cursor, p Policy, lastPush *time.Time, now time.Time) bool {
	if c.RetryAfter != nil && c.RetryAfter.After(now) {
		return false
	}
	return p.WindowBuffer <= 0 || lastPush == nil || !lastPush.After(now.Add(-p.WindowBuffer))
}

// SkipDeleted moves the cursor past the offsets below low, which are no
// longer stored: retention deleted them before the group consumed them. It
// answers the run it moved past and how many of its messages the group had
// not completed ahead of Committed; ok is false when there were none.
func (c *Cursor) SkipDeleted(low int64) (from, to, unread int64, ok bool) {
	if c.Committed+1 >= low {
		return 0, 0, 0, false
	}
	from, to = c.Committed+1, low-1
	unread = to - from + 1
	for _, o := range c.AckedAhead {
		if o >= from && o <= to {
			unread--
		}
	}
	c.advance(to)
	return from, to, unread, unread > 0
}

// advance moves Committed to at least to, then past offsets completed ahead
// of it, forgets those, and forgets a retry the cursor has moved past.
func (c *Cursor) advance(to int64) {
	c.Committed = max(c.Committed, to)
	for slices.Contains(c.AckedAhead, c.Committed+1) {
		c.Committed++
	}
	c.AckedAhead = slices.DeleteFunc(c.AckedAhead, func(o int64) bool { return o <= c.Committed })
	if c.RetryOffset != nil && *c.RetryOffset <= c.Committed {
		c.RetryOffset, c.RetryCount, c.RetryAfter = nil, 0, nil
	}
}

// addAhead records offset as done ahead of Committed.
func (c *Cursor) addAhead(offset int64) {
	if i, found := slices.BinarySearch(c.AckedAhead, offset); !found {
		c.AckedAhead = slices.Insert(c.AckedAhead, i, offset)
	}
}

package lease

import (
	"slices"
	"time"

	"github.com/google/uuid"
)

// Outcome is what an ack says of a message.
type Outcome int

// Outcomes: Completed is done; Failed is redelivered after retryDelay until
// it failed more than retryLimit times; DLQ goes to the dead letters now.
const (
	Completed Outcome = iota
	Failed
	DLQ
)

// Ack records outcome for the message whose transaction-id hash is hash in
// the live lease; leaseID uuid.Nil matches any lease. ok is false when the
// lease holds no such message (then resolve the hash to an offset and ask
// IsDone). For DLQ, dead is the dead letter to write now. The last outcome
// recorded for a message wins.
func Ack(c *Cursor, leaseID uuid.UUID, hash int64, o Outcome, reason string) (offset int64, dead *DeadLetter, ok bool) {
	l := &c.Lease
	if !l.Held() || leaseID != uuid.Nil && leaseID != l.ID {
		return 0, nil, false
	}
	i := slices.Index(l.Hashes, hash)
	if i < 0 {
		return 0, nil, false
	}
	offset = l.Offsets[i]
	l.Done = slices.DeleteFunc(l.Done, func(x int64) bool { return x == offset })
	l.Failed = slices.DeleteFunc(l.Failed, func(x int64) bool { return x == offset })
	switch o {
	case Completed:
		l.Done = append(l.Done, offset)
	case Failed:
		l.fail(offset, reason)
	case DLQ:
		dead = &DeadLetter{Offset: offset, Reason: reason, Retries: c.RetriesOf(offset)}
		l.Done = append(l.Done, offset)
	}
	return offset, dead, true
}

// fail records offset as failed. Error keeps the reason of the first failed
// message, the one a settle retries or dead-letters.
func (l *Lease) fail(offset int64, reason string) {
	if len(l.Failed) == 0 || offset < slices.Min(l.Failed) {
		l.Error = reason
	}
	l.Failed = append(l.Failed, offset)
}

// LeaseGone says an ack naming leaseID cannot apply because that lease is
// no longer the live one (it expired and was taken over, or settled).
func LeaseGone(c *Cursor, leaseID uuid.UUID) bool {
	return leaseID != uuid.Nil && (!c.Lease.Held() || c.Lease.ID != leaseID)
}

// Expire settles a lease whose time ran out: every leased message without
// an outcome counts as failed at the moment the lease ended, so it is
// redelivered (its retry delay counted from the expiry) and counts toward
// retryLimit.
func Expire(c *Cursor, p Policy, now time.Time) (expired bool, dead *DeadLetter) {
	l := &c.Lease
	if !l.Held() || l.Until.After(now) {
		return false, nil
	}
	for _, o := range l.Offsets {
		if !l.hasOutcome(o) {
			l.fail(o, "lease expired")
		}
	}
	return true, Settle(c, p, l.Until)
}

// Settle ends the lease, which must be Complete (or expired). With no
// failure the cursor moves past the lease. Otherwise it moves to just
// before the first failed message, whose retry count rises and which waits
// retryDelay from failedAt; messages completed after it are remembered as
// done ahead, so they are not delivered again. Past retryLimit the failed
// message is given up: dead is returned and the cursor moves past it.
func Settle(c *Cursor, p Policy, failedAt time.Time) (dead *DeadLetter) {
	l := c.Lease
	c.Lease = Lease{}
	if len(l.Failed) == 0 {
		c.advance(l.To())
		return nil
	}
	f := slices.Min(l.Failed)
	for _, o := range l.Done {
		if o > f {
			c.addAhead(o)
		}
	}
	c.advance(f - 1)
	if c.RetryOffset != nil && *c.RetryOffset == f {
		c.RetryCount++
	} else {
		c.RetryOffset, c.RetryCount = &f, 1
	}
	c.RetryAfter = nil
	if p.RetryDelay > 0 {
		after := failedAt.Add(p.RetryDelay)
		c.RetryAfter = &after
	}
	if c.RetryCount <= p.RetryLimit {
		return nil
	}
	dead = &DeadLetter{Offset: f, Reason: l.Error, Retries: c.RetryCount}
	c.advance(f)
	return dead
}

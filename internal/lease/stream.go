package lease

import (
	"slices"

	"github.com/google/uuid"
)

// Leased finds the message whose transaction-id hash is hash in c's lease,
// which must be live at the caller's now and, unless leaseID is uuid.Nil,
// be that lease. ok is false when it is not there.
func Leased(c *Cursor, leaseID uuid.UUID, hash int64) (offset int64, ok bool) {
	l := &c.Lease
	if !l.Held() || leaseID != uuid.Nil && leaseID != l.ID {
		return 0, false
	}
	i := slices.Index(l.Hashes, hash)
	if i < 0 {
		return 0, false
	}
	return l.Offsets[i], true
}

// CommitThrough acknowledges at once every leased message up to and
// including offset, as a streams cycle does (Queen's cycle ack names the
// last message of the batch): the cursor moves to offset. With release the
// lease ends; otherwise it keeps the messages after offset, which are
// delivered again, in order, once it expires (a gate's partial ack). acked
// is how many leased messages were not done before.
func CommitThrough(c *Cursor, offset int64, release bool) (acked int) {
	l := c.Lease
	for _, o := range l.Offsets {
		if o <= offset && !c.IsDone(o) {
			acked++
		}
	}
	c.Lease = Lease{}
	if !release {
		c.Lease = l.after(offset)
	}
	c.advance(offset)
	return acked
}

// after is the part of the lease past offset: the same lease with only the
// later messages, or no lease when none is left.
func (l Lease) after(offset int64) Lease {
	out := Lease{ID: l.ID, Until: l.Until}
	for i, o := range l.Offsets {
		if o > offset {
			out.Offsets = append(out.Offsets, o)
			out.Hashes = append(out.Hashes, l.Hashes[i])
		}
	}
	if len(out.Offsets) == 0 {
		return Lease{}
	}
	keep := func(o int64) bool { return o <= offset }
	out.Done = slices.DeleteFunc(slices.Clone(l.Done), keep)
	out.Failed = slices.DeleteFunc(slices.Clone(l.Failed), keep)
	if len(out.Failed) > 0 {
		out.Error = l.Error
	}
	return out
}

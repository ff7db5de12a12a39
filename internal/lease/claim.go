package lease

import (
	"time"

	"github.com/google/uuid"
)

// Offer is a stored message a claim may hand out.
type Offer struct {
	Offset int64
	Hash   int64
	// Unreadable says why the stored message cannot be delivered (a
	// damaged frame, a payload that is not JSON); "" when it can.
	Unreadable string
	// Expired says the message outlived the queue's ttl: it is never
	// delivered; the group passes it as done.
	Expired bool
}

// Claim is what a pop decided.
type Claim struct {
	// Deliver indexes the offers handed out, in offset order.
	Deliver []int
	// Dead are unreadable messages to dead-letter now.
	Dead []DeadLetter
	// Moved says the cursor passed messages without delivering them
	// (already done, dead-lettered or expired): reading on may find more.
	Moved bool
	// Expired counts the expired messages passed now.
	Expired int
}

// ClaimOffers hands out up to batch of offers, which must be the messages
// stored from c.Committed+1 on, in offset order (gaps allowed). Messages the
// group completed ahead of an earlier failure are skipped; unreadable ones
// go to the dead letters at once and count as done; expired ones (past the
// queue's ttl) count as done without delivery. Without autoAck the
// delivered messages are leased under id until now+LeaseTime; with it the
// cursor moves past them. The caller must have checked Busy, Expire and
// Ready first.
func ClaimOffers(c *Cursor, p Policy, offers []Offer, batch int, autoAck bool, id uuid.UUID, now time.Time) Claim {
	var out Claim
	leading := true // no offer delivered yet: done ones let the cursor pass
	for i, o := range offers {
		if len(out.Deliver) >= batch {
			break
		}
		if o.Offset <= c.Committed {
			continue
		}
		done := c.IsDone(o.Offset)
		switch {
		case done:
		case o.Unreadable != "":
			out.Dead = append(out.Dead, DeadLetter{Offset: o.Offset, Reason: "unreadable: " + o.Unreadable, Retries: c.RetriesOf(o.Offset)})
			done = true
		case o.Expired:
			out.Expired++
			done = true
		}
		switch {
		case done && leading:
			// Everything stored before it was in offers and done too.
			c.Committed = o.Offset
			out.Moved = true
		case done:
			c.addAhead(o.Offset)
		default:
			leading = false
			out.Deliver = append(out.Deliver, i)
		}
	}
	c.advance(c.Committed)
	if len(out.Deliver) == 0 {
		return out
	}
	last := offers[out.Deliver[len(out.Deliver)-1]].Offset
	if autoAck {
		c.advance(last)
		return out
	}
	l := Lease{ID: id, Until: now.Add(p.LeaseTime),
		Offsets: make([]int64, len(out.Deliver)), Hashes: make([]int64, len(out.Deliver))}
	for k, i := range out.Deliver {
		l.Offsets[k], l.Hashes[k] = offers[i].Offset, offers[i].Hash
	}
	c.Lease = l
	return out
}

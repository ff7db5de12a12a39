package engine

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/lease"
	"github.com/lethe-mq/lethe/internal/pushdec"
	"github.com/lethe-mq/lethe/internal/store"
)

// maxClaimRounds bounds how often one claim reads on after passing only
// messages it could not deliver (done ahead, or unreadable).
const maxClaimRounds = 4

// claimed is what one partition gave a pop.
type claimed struct {
	msgs    []api.Message
	leaseID string
	// unreadable counts stored messages dead-lettered because they could
	// not be served; unreadableErr is the first one's reason.
	unreadable    int
	unreadableErr error
	// expired counts messages passed undelivered because they outlived
	// the queue's ttl.
	expired int
	// gap is what retention deleted under the group's position, which the
	// claim moved past.
	gap *api.Gap
}

// claimSpec is what every claim of one pop shares.
type claimSpec struct {
	// batch is how many messages this claim may still hand out, and
	// maxBytes how many payload bytes before it stops adding one (0: no
	// bound; the first message always comes).
	batch    int
	maxBytes int64
	// leaseID names the lease of every partition the pop claims.
	leaseID uuid.UUID
	fromAt  *time.Time
	now     time.Time
}

// claimAmong claims from cands, in their order, until the pop is full or
// none is left that another consumer of the group is not holding or
// claiming right now; what each gives goes into resp. It answers the
// candidates it left because other consumers had them, and those it did
// not try because the pop was full.
func (e *Engine) claimAmong(ctx context.Context, q *Queue, req PopRequest, cands []candidate, spec claimSpec,
	resp *api.PopResponse, fx *effects) (taken, untried []candidate, err error) {
	pending, err := e.withCursors(ctx, q, req.Group, cands, spec.fromAt)
	if err != nil {
		return nil, nil, err
	}
	for len(pending) > 0 && !popFull(resp, req) {
		spec.batch = req.Batch - len(resp.Messages)
		if req.MaxBytes > 0 {
			spec.maxBytes = req.MaxBytes - popBytes(resp)
		}
		c, got, err := e.claim(ctx, q, pending, req, spec)
		if c == nil && err == nil {
			return pending, nil, nil // every one left is held or being claimed
		}
		if err != nil && c != nil && partitionFault(err) {
			fx.partitionFailed(q.Name, c.name, "pop", err)
			e.rotateFailed(ctx, c.pid, req.Group, spec.now)
		} else if err != nil {
			return nil, nil, err
		}
		pending = slices.DeleteFunc(pending, func(p candidate) bool { return p.pid == c.pid })
		addClaimed(resp, q, *c, req.Group, got, fx)
	}
	return nil, pending, nil
}

// withCursors creates the group's cursor on the candidates that have none
// yet, dropping those cleaned up since they were listed.
func (e *Engine) withCursors(ctx context.Context, q *Queue, group string, cands []candidate, fromAt *time.Time) ([]candidate, error) {
	out := make([]candidate, 0, len(cands))
	for _, c := range cands {
		if !c.hasCursor {
			ok, err := e.ensureCursor(ctx, c.pid, group, fromAt)
			if err != nil {
				return nil, err
			}
			if !ok {
				// The cached id is stale: nothing to deliver.
				e.catalog.forgetPartition(q.Name, c.name)
				continue
			}
			c.hasCursor = true
		}
		out = append(out, c)
	}
	return out, nil
}

// claim leases the next messages of the first of cands that no other
// consumer of the group holds or is claiming, in one short transaction, and
// answers which one it was (nil: none was free). The rules are
// internal/lease's; this loads the cursor, reads the frames, and stores the
// outcome.
func (e *Engine) claim(ctx context.Context, q *Queue, cands []candidate, req PopRequest, spec claimSpec) (*candidate, claimed, error) {
	var out claimed
	var cand *candidate
	err := e.consumerTx(ctx, func(tx pgx.Tx) error {
		row, ps, err := lockFirstFree(ctx, tx, cands, req.Group, spec.now, spec.batch, spec.maxBytes)
		if row == nil {
			return err
		}
		found := cands[slices.IndexFunc(cands, func(c candidate) bool { return c.pid == row.pid })]
		cand = &found
		if err != nil {
			return err
		}
		out, err = e.claimLocked(ctx, tx, q, *cand, req, row, ps, spec)
		return err
	})
	if err != nil && cand != nil {
		return cand, claimed{}, fmt.Errorf("pop %s/%s: %w", q.Name, cand.name, err)
	}
	if err != nil {
		return nil, claimed{}, fmt.Errorf("pop %s: %w", q.Name, err)
	}
	return cand, out, nil
}

// claimLocked decides and stores one claim on the locked cursor row.
func (e *Engine) claimLocked(ctx context.Context, tx pgx.Tx, q *Queue, cand candidate, req PopRequest,
	row *cursorRow, ps partState, spec claimSpec) (claimed, error) {
	c, pol, now := &row.Cursor, q.policy(), spec.now
	if c.Busy(now) {
		return claimed{}, nil
	}
	expired, dead := lease.Expire(c, pol, now)
	if err := e.writeDeadLetters(ctx, tx, row, now, dead); err != nil {
		return claimed{}, err
	}
	committed := c.Committed
	gap, err := skipGap(ctx, tx, q, cand, row, ps)
	if err != nil {
		return claimed{}, err
	}
	// A move past deleted offsets is saved even when it lost none of them
	// (no gap to tell): the candidates list a cursor below the low
	// watermark until it moves.
	skipped := c.Committed != committed
	if !lease.Ready(c, pol, ps.lastPush, now) || ps.next <= max(c.Committed+1, ps.low) {
		// A gap is saved as a pop: the group's position moved, and the
		// history that explains the next one starts here.
		return claimed{gap: gap}, row.saveIf(ctx, tx, now, expired || skipped)
	}
	frames, cl, out, err := e.claimFrames(ctx, tx, q, req, row, ps.read, spec)
	if err != nil {
		return claimed{}, err
	}
	out.gap = gap
	if len(cl.Deliver) == 0 {
		// Marking the empty claim as a pop rotates the candidates, so
		// partitions whose messages are not visible yet cannot crowd out
		// one that is ready.
		return out, row.saveIf(ctx, tx, now, expired || skipped || cl.Moved || q.DelayedProcessing > 0)
	}
	if err := row.save(ctx, tx, now, true); err != nil {
		return claimed{}, err
	}
	if c.Lease.Held() {
		out.leaseID = c.Lease.ID.String()
	}
	out.msgs = make([]api.Message, len(cl.Deliver))
	for k, i := range cl.Deliver {
		out.msgs[k] = deliveredMessage(q, cand, req.Group, out.leaseID, c.RetriesOf(frames[i].Offset), &frames[i])
	}
	return out, nil
}

// claimFrames reads the messages past the cursor and claims them, reading
// on while a read only passed messages it could not deliver. Unreadable
// messages are dead-lettered here. The first read is the lock's (pre) when
// it read the same offsets.
func (e *Engine) claimFrames(ctx context.Context, tx pgx.Tx, q *Queue, req PopRequest, row *cursorRow,
	pre prefetch, spec claimSpec) ([]store.Frame, lease.Claim, claimed, error) {
	now := spec.now
	visible := now.Add(-time.Duration(q.DelayedProcessing) * time.Second)
	var out claimed
	for round := 0; ; round++ {
		from, limit := row.Committed+1, spec.batch+len(row.AckedAhead)
		frames, ok := pre.frames(row.pid, from, limit, spec.maxBytes, visible)
		var err error
		if !ok {
			frames, err = store.Read(ctx, tx, row.pid, from, limit, spec.maxBytes, visible)
		}
		pre = prefetch{} // used once: later rounds read past it
		if err != nil {
			return nil, lease.Claim{}, out, err
		}
		offers := e.offersOf(q, frames, now)
		cl := lease.ClaimOffers(&row.Cursor, q.policy(), offers, spec.batch, req.AutoAck, spec.leaseID, now)
		out.expired += cl.Expired
		for _, d := range cl.Dead {
			if out.unreadableErr == nil {
				out.unreadableErr = fmt.Errorf("offset %d: %s", d.Offset, d.Reason)
			}
			out.unreadable++
			if err := e.writeDeadLetter(ctx, tx, row, d, frameAt(frames, d.Offset), now); err != nil {
				return nil, lease.Claim{}, out, err
			}
		}
		if len(cl.Deliver) > 0 || !cl.Moved || round == maxClaimRounds-1 {
			return frames, cl, out, nil
		}
	}
}

// offersOf turns stored frames into what a claim may hand out, opening
// sealed payloads in place (frames[i].Payload becomes the JSON). A frame
// that cannot be written into a response verbatim (damaged, sealed under a
// key this server does not hold, or a payload that is not JSON PostgreSQL
// can store) is offered as unreadable: it goes to the dead letters, still
// sealed, instead of breaking the response for the other messages. A
// message older than the queue's ttl is offered as expired.
func (e *Engine) offersOf(q *Queue, frames []store.Frame, now time.Time) []lease.Offer {
	expiredBefore := now.Add(-time.Duration(q.TTL) * time.Second)
	out := make([]lease.Offer, len(frames))
	for i := range frames {
		f := &frames[i]
		out[i] = lease.Offer{Offset: f.Offset}
		if f.Err != nil {
			out[i].Unreadable = f.Err.Error()
			continue
		}
		payload, err := e.openPayload(f)
		switch {
		case err != nil:
			out[i].Unreadable = err.Error()
		case len(payload) > 0 && !pushdec.Valid(payload):
			out[i].Unreadable = "the stored payload is not JSON PostgreSQL can store"
		default:
			f.Payload, f.Sealed = payload, false
			out[i].Hash = store.TxnHash(f.TxnID)
			out[i].Expired = q.TTL > 0 && f.CreatedAt.Before(expiredBefore)
		}
	}
	return out
}

func frameAt(frames []store.Frame, offset int64) *store.Frame {
	for i := range frames {
		if frames[i].Offset == offset {
			return &frames[i]
		}
	}
	return nil
}

// deliveredMessage is one delivered message as the API shows it.
func deliveredMessage(q *Queue, cand candidate, group, leaseID string, retries int, f *store.Frame) api.Message {
	return api.Message{
		ID:            MessageID(cand.pid, f.Offset),
		TransactionID: f.TxnID,
		TraceID:       api.NullString(f.TraceID),
		Data:          f.Payload,
		ProducerSub:   api.NullString(f.ProducerSub),
		CreatedAt:     f.CreatedAt.Format(time.RFC3339Nano),
		Queue:         q.Name,
		Partition:     cand.name,
		PartitionID:   cand.pid.String(),
		LeaseID:       leaseID,
		ConsumerGroup: groupLabel(group),
		RetryCount:    retries,
		Offset:        f.Offset,
	}
}

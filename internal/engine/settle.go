package engine

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
)

// settle ends c's lease once every leased offset has an outcome. Offsets up
// to the first failure are done; the failed one is retried after the
// queue's retryDelay (counted from failedAt) until it has failed more than
// retryLimit times, when it goes to the dead letters and the group moves
// past it. Offsets completed after the failed one are remembered in
// ackedAhead, so they are not delivered again.
func (e *Engine) settle(ctx context.Context, tx pgx.Tx, c *cursor, q *Queue, failedAt, now time.Time) (dead bool, err error) {
	if len(c.leaseFail) == 0 {
		c.advance(c.leaseTo)
		c.retryOffset, c.retryCount, c.retryAfter = nil, 0, nil
		c.clearLease()
		return false, nil
	}
	f := slices.Min(c.leaseFail)
	for _, o := range c.leaseDone {
		if o > f && !c.isAckedAhead(o) {
			c.ackedAhead = append(c.ackedAhead, o)
		}
	}
	slices.Sort(c.ackedAhead)
	c.advance(f - 1)
	if c.retryOffset != nil && *c.retryOffset == f {
		c.retryCount++
	} else {
		c.retryOffset, c.retryCount = &f, 1
	}
	c.retryAfter = nil
	if q.RetryDelay > 0 {
		after := failedAt.Add(q.RetryDelay)
		c.retryAfter = &after
	}
	if c.retryCount > q.RetryLimit {
		if err := e.deadLetter(ctx, tx, c, f, c.leaseError, c.retryCount, now); err != nil {
			return false, err
		}
		c.advance(f)
		c.retryOffset, c.retryCount, c.retryAfter = nil, 0, nil
		dead = true
	}
	c.clearLease()
	return dead, nil
}

// expireLease settles a lease whose time ran out: whatever was not acked
// counts as failed at the moment the lease ended, so it is redelivered and
// counts toward retryLimit.
func (e *Engine) expireLease(ctx context.Context, tx pgx.Tx, c *cursor, q *Queue, now time.Time) error {
	for o := c.leaseFrom; o <= c.leaseTo; o++ {
		if !slices.Contains(c.leaseDone, o) && !slices.Contains(c.leaseFail, o) {
			c.leaseFail = append(c.leaseFail, o)
		}
	}
	if c.leaseError == "" {
		c.leaseError = "lease expired"
	}
	_, err := e.settle(ctx, tx, c, q, c.leaseUntil, now)
	return err
}

// deadLetter copies the message at offset into the dead letters of c's group.
func (e *Engine) deadLetter(ctx context.Context, tx pgx.Tx, c *cursor, offset int64, reason string, retries int, now time.Time) error {
	frames, err := readFrames(ctx, tx, c.pid, offset, 1, farFuture)
	if err != nil {
		return err
	}
	var txnID, traceID string
	var payload []byte
	created := now
	if len(frames) == 1 && frames[0].offset == offset {
		f := frames[0]
		txnID, traceID, payload, created = f.TxnID, f.TraceID, f.Payload, f.CreatedAt
	}
	_, err = tx.Exec(ctx, `
		INSERT INTO lethe.dead_letters (partition_id, group_name, msg_offset, txn_id, trace_id, payload,
		                                error, retry_count, created_at, failed_at)
		VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9, $10)`,
		c.pid, c.group, offset, txnID, traceID, nullJSON(payload), reason, retries, created, now)
	if err != nil {
		return fmt.Errorf("dead-letter offset %d of %s: %w", offset, c.pid, err)
	}
	return nil
}

// farFuture makes every frame visible.
var farFuture = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

func nullJSON(b []byte) *string {
	if b == nil {
		return nil
	}
	s := string(b)
	return &s
}

package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// cursor is one consumer group's position and lease on one partition.
type cursor struct {
	pid         uuid.UUID
	group       string
	committed   int64
	leaseID     *uuid.UUID
	leaseFrom   int64
	leaseTo     int64
	leaseUntil  time.Time
	leaseTxns   []string
	leaseDone   []int64
	leaseFail   []int64
	leaseError  string
	retryOffset *int64
	retryCount  int
	retryAfter  *time.Time
	ackedAhead  []int64
}

// cursorColumnsTmpl lists a cursor's columns; %[1]s is a table alias
// prefix ("" or "c.").
const cursorColumnsTmpl = `%[1]spartition_id, %[1]sgroup_name, %[1]scommitted, %[1]slease_id,
	coalesce(%[1]slease_from, 0), coalesce(%[1]slease_to, -1), coalesce(%[1]slease_until, 'epoch'),
	coalesce(%[1]slease_txns, '{}'), coalesce(%[1]slease_done, '{}'), coalesce(%[1]slease_fail, '{}'),
	coalesce(%[1]slease_error, ''), %[1]sretry_offset, %[1]sretry_count, %[1]sretry_after,
	coalesce(%[1]sacked_ahead, '{}')`

func cursorColumns(alias string) string { return fmt.Sprintf(cursorColumnsTmpl, alias) }

// fields lists where a row of cursorColumns scans to, in order; callers
// append the extra columns they select.
func (c *cursor) fields(extra ...any) []any {
	return append([]any{&c.pid, &c.group, &c.committed, &c.leaseID, &c.leaseFrom, &c.leaseTo, &c.leaseUntil,
		&c.leaseTxns, &c.leaseDone, &c.leaseFail, &c.leaseError, &c.retryOffset, &c.retryCount, &c.retryAfter,
		&c.ackedAhead}, extra...)
}

func (c *cursor) leased() bool { return c.leaseID != nil }

// clearLease forgets the lease; the committed offset stays.
func (c *cursor) clearLease() {
	c.leaseID = nil
	c.leaseFrom, c.leaseTo = 0, -1
	c.leaseTxns, c.leaseDone, c.leaseFail = nil, nil, nil
	c.leaseError = ""
}

// save writes the cursor back.
func (c *cursor) save(ctx context.Context, tx pgx.Tx, now time.Time, popped bool) error {
	var from, to *int64
	var until *time.Time
	var txns []string
	var done, fail []int64
	if c.leased() {
		from, to, until = &c.leaseFrom, &c.leaseTo, &c.leaseUntil
		txns, done, fail = c.leaseTxns, c.leaseDone, c.leaseFail
	}
	_, err := tx.Exec(ctx, `
		UPDATE lethe.cursors SET committed = $3, lease_id = $4, lease_from = $5, lease_to = $6,
		       lease_until = $7, lease_txns = $8, lease_done = $9, lease_fail = $10, lease_error = $11,
		       retry_offset = $12, retry_count = $13, updated_at = $14, retry_after = $16, acked_ahead = $17,
		       last_pop_at = CASE WHEN $15 THEN $14 ELSE last_pop_at END
		 WHERE partition_id = $1 AND group_name = $2`,
		c.pid, c.group, c.committed, c.leaseID, from, to, until, txns, done, fail, nullIfEmpty(c.leaseError),
		c.retryOffset, c.retryCount, now, popped, c.retryAfter, nilIfEmpty(c.ackedAhead))
	if err != nil {
		return fmt.Errorf("save cursor %s/%s: %w", c.pid, c.group, err)
	}
	return nil
}

func nullIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// outcomeCount is how many leased offsets have been acked or failed.
func (c *cursor) outcomeCount() int {
	seen := map[int64]bool{}
	for _, o := range c.leaseDone {
		seen[o] = true
	}
	for _, o := range c.leaseFail {
		seen[o] = true
	}
	return len(seen)
}

func (c *cursor) leaseSize() int { return int(c.leaseTo - c.leaseFrom + 1) }

// partState is what a pop needs of the partition row, read with the cursor.
type partState struct {
	next, low int64
	lastPush  *time.Time
}

// lockCursorForPop locks the group's cursor on pid, skipping it when another
// consumer holds it, and reads the partition's offsets in the same round trip.
func lockCursorForPop(ctx context.Context, tx pgx.Tx, pid uuid.UUID, group string) (*cursor, partState, error) {
	var ps partState
	c := &cursor{}
	err := tx.QueryRow(ctx, `SELECT `+cursorColumns("c.")+`, p.next_offset, p.low_watermark, p.last_push_at
		  FROM lethe.cursors c JOIN lethe.partitions p ON p.id = c.partition_id
		 WHERE c.partition_id = $1 AND c.group_name = $2
		   FOR UPDATE OF c SKIP LOCKED`, pid, group).
		Scan(c.fields(&ps.next, &ps.low, &ps.lastPush)...)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, ps, nil
	}
	if err != nil {
		return nil, ps, fmt.Errorf("lock cursor %s/%s: %w", pid, group, err)
	}
	return c, ps, nil
}

// saveIf saves the cursor, counting it as popped, only when something
// changed or the caller wants the pop recorded.
func (c *cursor) saveIf(ctx context.Context, tx pgx.Tx, now time.Time, dirty bool) error {
	if !dirty {
		return nil
	}
	return c.save(ctx, tx, now, true)
}

func nilIfEmpty(s []int64) []int64 {
	if len(s) == 0 {
		return nil
	}
	return s
}

// advance moves committed to at least to, then past any offsets already
// completed ahead of it, and forgets those.
func (c *cursor) advance(to int64) {
	c.committed = max(c.committed, to)
	for slices.Contains(c.ackedAhead, c.committed+1) {
		c.committed++
	}
	c.ackedAhead = slices.DeleteFunc(c.ackedAhead, func(o int64) bool { return o <= c.committed })
}

// isAckedAhead tells whether offset was completed ahead of the cursor.
func (c *cursor) isAckedAhead(offset int64) bool { return slices.Contains(c.ackedAhead, offset) }

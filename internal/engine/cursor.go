package engine

import (
	"context"
	"errors"
	"fmt"
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
}

const cursorColumns = `partition_id, group_name, committed, lease_id, coalesce(lease_from, 0), coalesce(lease_to, -1),
	coalesce(lease_until, 'epoch'), coalesce(lease_txns, '{}'), coalesce(lease_done, '{}'),
	coalesce(lease_fail, '{}'), coalesce(lease_error, ''), retry_offset, retry_count, retry_after`

func scanCursor(row pgx.Row) (*cursor, error) {
	c := &cursor{}
	err := row.Scan(&c.pid, &c.group, &c.committed, &c.leaseID, &c.leaseFrom, &c.leaseTo, &c.leaseUntil,
		&c.leaseTxns, &c.leaseDone, &c.leaseFail, &c.leaseError, &c.retryOffset, &c.retryCount, &c.retryAfter)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	return c, err
}

// lockCursor locks the cursor row; with skipLocked it answers nil when
// another session holds it. nil also means the row does not exist.
func lockCursor(ctx context.Context, tx pgx.Tx, pid uuid.UUID, group string, skipLocked bool) (*cursor, error) {
	q := `SELECT ` + cursorColumns + ` FROM lethe.cursors WHERE partition_id = $1 AND group_name = $2 FOR UPDATE`
	if skipLocked {
		q += ` SKIP LOCKED`
	}
	c, err := scanCursor(tx.QueryRow(ctx, q, pid, group))
	if err != nil {
		return nil, fmt.Errorf("lock cursor %s/%s: %w", pid, group, err)
	}
	return c, nil
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
		       retry_offset = $12, retry_count = $13, updated_at = $14, retry_after = $16,
		       last_pop_at = CASE WHEN $15 THEN $14 ELSE last_pop_at END
		 WHERE partition_id = $1 AND group_name = $2`,
		c.pid, c.group, c.committed, c.leaseID, from, to, until, txns, done, fail, nullIfEmpty(c.leaseError),
		c.retryOffset, c.retryCount, now, popped, c.retryAfter)
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

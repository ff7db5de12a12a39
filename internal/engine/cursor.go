package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/internal/lease"
	"github.com/lethe-mq/lethe/internal/store"
)

// cursorRow is a group's cursor on a partition as stored in lethe.cursors:
// the lease package's value and its key. The rules live in internal/lease;
// this file only loads and stores.
type cursorRow struct {
	pid   uuid.UUID
	group string
	lease.Cursor
	leaseID *uuid.UUID // scan target of the nullable lease_id
}

// fields lists where a cursor's columns, as store.LockFreeCursor and
// store.LockCursorForAck answer them first, scan to, in order; callers
// append the extra columns they select. Call loaded after the scan.
func (c *cursorRow) fields(extra ...any) []any {
	l := &c.Lease
	return append([]any{&c.pid, &c.group, &c.Committed, &c.leaseID, &l.Until, &l.Offsets, &l.Hashes,
		&l.Done, &l.Failed, &l.Error, &c.RetryOffset, &c.RetryCount, &c.RetryAfter, &c.AckedAhead}, extra...)
}

// loaded completes a scanned row and checks that its lease is usable.
func (c *cursorRow) loaded() error {
	if c.leaseID == nil {
		c.Lease = lease.Lease{}
		return nil
	}
	c.Lease.ID = *c.leaseID
	if len(c.Lease.Offsets) == 0 || len(c.Lease.Offsets) != len(c.Lease.Hashes) {
		return fmt.Errorf("%w: cursor %s/%s holds a lease of %d offsets and %d hashes",
			errCorruptState, c.pid, c.group, len(c.Lease.Offsets), len(c.Lease.Hashes))
	}
	return nil
}

// save writes the cursor back; popped also records the pop time, which
// orders the candidates of the next pops.
func (c *cursorRow) save(ctx context.Context, tx pgx.Tx, now time.Time, popped bool) error {
	l := &c.Lease
	var id *uuid.UUID
	var from, to *int64
	var until *time.Time
	var offsets, hashes, done, fail []int64
	if l.Held() {
		f, t := l.From(), l.To()
		id, from, to, until = &l.ID, &f, &t, &l.Until
		offsets, hashes, done, fail = l.Offsets, l.Hashes, l.Done, l.Failed
	}
	// Deferred: in a consumer transaction it goes with the next statement
	// or with COMMIT, in that round trip.
	sql, args := store.SaveCursorStmt(store.CursorWrite{PartitionID: c.pid, Group: c.group, Committed: c.Committed,
		LeaseID: id, LeaseFrom: from, LeaseTo: to, LeaseUntil: until, Offsets: offsets, Hashes: hashes, Done: done, Failed: fail,
		Error: l.Error, RetryOffset: c.RetryOffset, RetryCount: c.RetryCount, RetryAfter: c.RetryAfter, AckedAhead: c.AckedAhead,
		Now: now, Popped: popped})
	return deferExec(ctx, tx, fmt.Sprintf("save cursor %s/%s", c.pid, c.group), sql, args...)
}

// saveIf saves the cursor, counting it as popped, only when something
// changed or the caller wants the pop recorded.
func (c *cursorRow) saveIf(ctx context.Context, tx pgx.Tx, now time.Time, dirty bool) error {
	if !dirty {
		return nil
	}
	return c.save(ctx, tx, now, true)
}

// partState is what a pop needs of the partition row, read with the cursor.
type partState struct {
	next, low int64
	lastPush  *time.Time
	// lastPop is the group's last claim of the partition (nil: none yet).
	lastPop *time.Time
	// read is what the lock's statement read past the cursor.
	read prefetch
}

// prefetch is a read made with the cursor's lock: the segments of
// lethe.read_segments(pid, from, limit, maxBytes), taken when the
// partition had offsets past the cursor. A claim uses it for its first
// read when that read asks for the same from and bounds (the lease rules
// did not move the cursor first), and reads again otherwise.
type prefetch struct {
	done     bool
	from     int64
	limit    int
	maxBytes int64
	segs     []store.Segment
}

// frames answers the prefetched frames when they are the read of (from,
// limit, maxBytes).
func (p prefetch) frames(pid uuid.UUID, from int64, limit int, maxBytes int64, visible time.Time) ([]store.Frame, bool) {
	if !p.done || p.from != from || p.limit != limit || p.maxBytes != maxBytes {
		return nil, false
	}
	return store.DecodeSegments(pid, from, limit, maxBytes, visible, p.segs), true
}

// lockFirstFree locks the group's cursor on the first of cands (in their
// order) that no other consumer holds a live lease on or is claiming right
// now (its row locked: skipped), and reads the partition's offsets in the
// same round trip; nil when there is none. A row leased by a claim that
// committed after this statement began is re-checked on its new version and
// passed over too. The row is answered with a corrupt lease's error, so the
// caller knows which partition failed. When the partition has offsets past
// the cursor, the statement also reads up to batch of them (and as many as
// the group acked ahead, which a claim passes over) within maxBytes, as
// claimFrames would: ps.read.
func lockFirstFree(ctx context.Context, tx pgx.Tx, cands []candidate, group string, now time.Time, batch int, maxBytes int64) (*cursorRow, partState, error) {
	pids := make([]uuid.UUID, len(cands))
	for i, c := range cands {
		pids[i] = c.pid
	}
	ps := partState{read: prefetch{maxBytes: maxBytes}}
	c := &cursorRow{}
	rows, err := store.LockFreeCursor(ctx, tx, pids, group, now, batch, maxBytes)
	if err != nil {
		return nil, ps, fmt.Errorf("lock a cursor of group %s: %w", group, err)
	}
	defer rows.Close()
	// Each row is a segment (NULL columns: none read) after the cursor's
	// columns, which are scanned from the first row and skipped (nil) after.
	var base, last *int64
	var lastAt *time.Time
	var frames []byte
	first := append(c.fields(&ps.next, &ps.low, &ps.lastPush, &ps.lastPop, &ps.read.done, &ps.read.from, &ps.read.limit),
		&base, &last, &lastAt, &frames)
	later := make([]any, len(first))
	copy(later[len(first)-4:], first[len(first)-4:])
	found := false
	for rows.Next() {
		dest := first
		if found {
			dest = later
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, ps, fmt.Errorf("lock a cursor of group %s: %w", group, err)
		}
		found = true
		if base != nil {
			ps.read.segs = append(ps.read.segs, store.Segment{Base: *base, Last: *last, LastAt: *lastAt, Frames: frames})
		}
		frames = nil
	}
	if err := rows.Err(); err != nil {
		return nil, ps, fmt.Errorf("lock a cursor of group %s: %w", group, err)
	}
	if !found {
		return nil, ps, nil
	}
	return c, ps, c.loaded()
}

// ackTarget is what an ack needs besides the cursor: names for the answer,
// the queue's delivery policy, and what tells whether a released lease
// leaves work: the partition's next offset, and its push mark
// (notifier.pushMarks) from before that offset was read.
type ackTarget struct {
	pid              uuid.UUID
	queueID          int64
	queue, partition string
	policy           lease.Policy
	next             int64
	pushMark         uint64
}

// lockCursorForAck locks the group's cursor on pid (waiting for a pop or
// ack holding it) and reads the queue's policy in the same round trip; nil
// when there is no cursor.
func (e *Engine) lockCursorForAck(ctx context.Context, tx pgx.Tx, pid uuid.UUID, group string) (*cursorRow, ackTarget, error) {
	t := ackTarget{pid: pid, pushMark: e.notifier.pushMark(pid)} // the mark before next_offset
	var retryDelayMs int
	c := &cursorRow{}
	err := store.LockCursorForAck(ctx, tx, pid, group).
		Scan(c.fields(&t.queueID, &t.queue, &t.partition, &t.policy.RetryLimit, &retryDelayMs, &t.next)...)
	t.policy.RetryDelay = time.Duration(retryDelayMs) * time.Millisecond
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, t, nil
	}
	if err != nil {
		return nil, t, fmt.Errorf("ack: lock cursor %s/%s: %w", pid, group, err)
	}
	return c, t, c.loaded()
}

// release records in fx that group's lease on the target ended with the
// group at committed: one of the group's long polls wakes, named the
// partition, when messages follow committed or a push to the partition
// landed during the ack.
func (t ackTarget) release(fx *effects, group string, committed int64) {
	fx.released(t.queue, group, wakeHint{queueID: t.queueID, pid: t.pid, partition: t.partition}, t.next > committed+1, t.pushMark)
}

package engine

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/internal/lease"
	"github.com/lethe-mq/lethe/internal/store"
)

// unstorablePayload is added to a dead letter's error when the message's
// payload could not be copied as JSON.
const unstorablePayload = " (the payload could not be kept: it is not JSON PostgreSQL can store; the message stays in its segment until retention removes it)"

// writeDeadLetter copies the message a lease decision gave up on into the
// group's dead letters. f is the message when the caller has read it
// already; otherwise it is read here. Whatever the segment holds, the copy
// is written: a message no longer stored or unreadable is kept without its
// content, names are made storable, a payload jsonb refuses is kept as
// NULL with the reason in the error, and a sealed payload (an encrypted
// queue's) stays sealed, whether this server can open it or not.
func (e *Engine) writeDeadLetter(ctx context.Context, tx pgx.Tx, row *cursorRow, d lease.DeadLetter, f *store.Frame, now time.Time) error {
	if f == nil {
		got, found, err := store.ReadAt(ctx, tx, row.pid, d.Offset)
		if err != nil {
			return err
		}
		if found {
			f = &got
		}
	}
	var txnID, traceID string
	var payload *string
	var sealed []byte
	created := now
	if f != nil && f.Err == nil {
		txnID, traceID, created = storable(f.TxnID), storable(f.TraceID), f.CreatedAt
		switch {
		case f.Sealed:
			sealed = f.Payload // stays sealed, as in its segment
		case utf8.Valid(f.Payload):
			p := string(f.Payload)
			payload = &p
		}
	}
	err := store.WriteDeadLetter(ctx, tx, store.DeadLetter{Partition: row.pid, Group: row.group, Offset: d.Offset,
		TxnID: txnID, TraceID: traceID, Payload: payload, Sealed: sealed, Error: storable(d.Reason),
		UnstorableNote: unstorablePayload, Retries: d.Retries, CreatedAt: created, FailedAt: now})
	if err != nil {
		return fmt.Errorf("dead-letter offset %d of %s: %w", d.Offset, row.pid, err)
	}
	return nil
}

// writeDeadLetters writes each of dead, reading its message.
func (e *Engine) writeDeadLetters(ctx context.Context, tx pgx.Tx, row *cursorRow, now time.Time, dead ...*lease.DeadLetter) error {
	for _, d := range dead {
		if d == nil {
			continue
		}
		if err := e.writeDeadLetter(ctx, tx, row, *d, nil, now); err != nil {
			return err
		}
	}
	return nil
}

// storable makes a name from a frame storable as text: PostgreSQL refuses
// NUL and invalid UTF-8, which a frame may hold; both become U+FFFD.
func storable(s string) string {
	if utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 {
		return s
	}
	return strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", "\uFFFD"), "\uFFFD")
}

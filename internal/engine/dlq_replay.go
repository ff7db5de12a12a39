package engine

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/frame"
	"github.com/lethe-mq/lethe/internal/holds"
	"github.com/lethe-mq/lethe/internal/store"
)

// ParseDeadLetterID checks the id of a dead letter as it appears in URLs.
func ParseDeadLetterID(s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id < 1 {
		return 0, invalidf("dead letter id must be a positive whole number (the id field of GET /api/v1/dlq), got %q", s)
	}
	return id, nil
}

// DeleteDeadLetter drops one dead letter for good.
// A dead letter of a queue under a retention hold is refused (409).
func (e *Engine) DeleteDeadLetter(ctx context.Context, id int64) error {
	deleted, err := store.DeleteDeadLetterUnlessHeld(ctx, e.pool, id)
	if err != nil {
		return fmt.Errorf("delete dead letter %d: %w", id, err)
	}
	if !deleted {
		if qid, err := store.DeadLetterQueueID(ctx, e.pool, id); err == nil && qid != nil {
			if err := holds.RefuseHeld(ctx, e.pool, *qid, fmt.Sprintf("delete dead letter %d", id)); err != nil {
				return err
			}
		}
		return notFoundf("dead letter %d does not exist (already replayed or deleted?)", id)
	}
	return nil
}

// ReplayDeadLetter appends the dead letter's payload to its partition again
// under a new transaction id and deletes the dead letter, both in one
// transaction. The copy lands at the end of the log, so every consumer
// group reading that partition receives it, not only the one that gave up.
func (e *Engine) ReplayDeadLetter(ctx context.Context, id int64) (*api.DeadLetterReplayed, error) {
	res := &api.DeadLetterReplayed{Success: true, ID: strconv.FormatInt(id, 10), TransactionID: uuid.NewString()}
	var hint wakeHint
	err := pgx.BeginFunc(ctx, e.pool, func(tx pgx.Tx) error {
		d, err := store.LockDeadLetter(ctx, tx, id)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFoundf("dead letter %d does not exist (already replayed or deleted?)", id)
		}
		if err != nil {
			return fmt.Errorf("load dead letter %d: %w", id, err)
		}
		pid := d.Partition
		hint.queueID, res.Queue, res.Partition = d.QueueID, d.Queue, d.PartitionName
		now := e.clock.Now()
		m, err := e.replayMessage(ctx, id, res, d.TraceID, d.Payload, d.Sealed, now)
		if err != nil {
			return err
		}
		b := store.NewBatch(1, frame.Len(m))
		b.AddMessage(store.TxnHash(res.TransactionID), m, false)
		appended, err := store.Append(ctx, tx, pid, b, now)
		if errors.Is(err, store.ErrPartitionGone) {
			return fmt.Errorf("%w: partition %s was deleted meanwhile", ErrConflict, pid)
		}
		if err != nil {
			return err
		}
		if err := store.DeleteDeadLetter(ctx, tx, id); err != nil {
			return fmt.Errorf("delete replayed dead letter %d: %w", id, err)
		}
		hint.pid, hint.partition = pid, res.Partition
		res.PartitionID, res.Offset = pid.String(), appended[0].Offset
		res.MessageID = MessageID(pid, res.Offset)
		return nil
	})
	if err != nil {
		return nil, err
	}
	var fx effects
	fx.pushed(res.Queue, 1, hint)
	e.fire(&fx)
	return res, nil
}

// replayMessage is the message a replay appends: the dead letter's
// payload, opened when it was sealed and sealed again when its queue is
// encrypted.
func (e *Engine) replayMessage(ctx context.Context, id int64, res *api.DeadLetterReplayed, traceID string, payload, sealed []byte, now time.Time) (frame.Message, error) {
	if sealed != nil {
		plain, err := e.openDeadLetter(sealed)
		if err != nil {
			return frame.Message{}, fmt.Errorf("%w: dead letter %d cannot be replayed: %v; configure the key that sealed it (QUEEN_ENCRYPTION_KEY_PREVIOUS) and replay again",
				ErrConflict, id, err) //nolint:errorlint // the kind is ErrConflict; the cause is told, not wrapped, so it cannot change the status
		}
		payload = plain
	}
	if payload == nil {
		return frame.Message{}, fmt.Errorf("%w: dead letter %d has no payload (its message was gone or unreadable when it failed), so there is nothing to replay; delete it instead",
			ErrConflict, id)
	}
	q, err := e.catalog.queue(ctx, res.Queue)
	if err != nil {
		return frame.Message{}, err
	}
	m := frame.Message{CreatedAt: now, TxnID: res.TransactionID, TraceID: traceID, Payload: payload}
	if err := e.sealFor(q, &m); err != nil {
		return frame.Message{}, err
	}
	return m, nil
}

// openDeadLetter opens a dead letter's sealed payload.
func (e *Engine) openDeadLetter(sealed []byte) ([]byte, error) {
	plain, err := e.cfg.Keys.Open(sealed)
	if err != nil {
		return nil, fmt.Errorf("the payload is encrypted and cannot be opened: %w", err)
	}
	return plain, nil
}

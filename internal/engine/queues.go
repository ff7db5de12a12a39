package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/internal/holds"
	"github.com/lethe-mq/lethe/internal/store"
)

// DeleteQueue removes a queue with all its partitions, messages, cursors and
// dead letters. It is the operator's explicit choice to lose data, so it is
// bounded: segments go in batches, each its own short transaction, before
// the queue row.
func (e *Engine) DeleteQueue(ctx context.Context, name string) (segments int64, err error) {
	qid, err := store.QueueID(ctx, e.pool, name)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, notFoundf("queue %q does not exist", name)
	}
	if err != nil {
		return 0, fmt.Errorf("delete queue %s: %w", name, err)
	}
	// Before anything goes: the trigger on lethe.queues refuses only the
	// last statement.
	if err := holds.RefuseHeld(ctx, e.pool, qid, "delete queue "+name); err != nil {
		return 0, err
	}
	for {
		n, done, err := store.DeleteQueueStep(ctx, e.pool, qid, 1000)
		segments += n
		if err != nil {
			return segments, fmt.Errorf("delete queue %s: %w", name, err)
		}
		if done {
			break
		}
	}
	if err := store.DeleteQueueRow(ctx, e.pool, qid); err != nil {
		return segments, fmt.Errorf("delete queue %s: %w", name, err)
	}
	e.catalog.forgetQueue(name)
	return segments, nil
}

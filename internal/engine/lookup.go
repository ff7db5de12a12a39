package engine

import (
	"context"

	"github.com/google/uuid"
)

// queueID returns the id of the named queue, or ErrNotFound.
func (e *Engine) queueID(ctx context.Context, name string) (int64, error) {
	if err := ValidateName("queue", name); err != nil {
		return 0, err
	}
	q, err := e.catalog.queue(ctx, name)
	if err != nil {
		return 0, err
	}
	if q == nil {
		return 0, notFoundf("queue %q does not exist", name)
	}
	return q.ID, nil
}

// partitionOf returns the id of a partition of the named queue, or
// ErrNotFound.
func (e *Engine) partitionOf(ctx context.Context, queue, partition string) (uuid.UUID, error) {
	if err := ValidateName("partition", partition); err != nil {
		return uuid.Nil, err
	}
	q, err := e.catalog.queue(ctx, queue)
	if err != nil {
		return uuid.Nil, err
	}
	if q == nil {
		return uuid.Nil, notFoundf("queue %q does not exist", queue)
	}
	pid, ok, err := e.catalog.partitionID(ctx, q, partition)
	if err != nil {
		return uuid.Nil, err
	}
	if !ok {
		return uuid.Nil, notFoundf("queue %q has no partition %q", queue, partition)
	}
	return pid, nil
}

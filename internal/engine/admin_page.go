package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/internal/store"
)

// Bounds of every admin list.
const (
	PageLimitDefault = 100
	PageLimitMax     = 1000
	// pageOffsetMax keeps OFFSET scans from being used to walk huge tables.
	pageOffsetMax = 1_000_000
)

// Page selects a slice of a list: at most Limit items after skipping Offset.
type Page struct {
	Limit  int
	Offset int
}

// validate fills the default limit and rejects out-of-range values.
func (p *Page) validate() error {
	if p.Limit == 0 {
		p.Limit = PageLimitDefault
	}
	if p.Limit < 1 || p.Limit > PageLimitMax {
		return invalidf("limit must be between 1 and %d, got %d", PageLimitMax, p.Limit)
	}
	if p.Offset < 0 || p.Offset > pageOffsetMax {
		return invalidf("offset must be between 0 and %d, got %d", pageOffsetMax, p.Offset)
	}
	return nil
}

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

// partitionLabel is where a partition sits, for admin answers.
type partitionLabel struct {
	queueID   int64
	queue     string
	namespace string
	task      string
	partition string
	// ttl is the queue's ttl (0: none).
	ttl time.Duration
}

func (e *Engine) labelPartition(ctx context.Context, q store.Querier, pid uuid.UUID) (*partitionLabel, error) {
	rows, err := q.Query(ctx, `
		SELECT q.id, q.name, q.namespace, q.task, p.name, coalesce((q.options->>'ttl')::int, 0)
		  FROM lethe.partitions p JOIN lethe.queues q ON q.id = p.queue_id
		 WHERE p.id = $1`, pid)
	if err != nil {
		return nil, fmt.Errorf("look up partition %s: %w", pid, err)
	}
	l, err := pgx.CollectExactlyOneRow(rows, func(r pgx.CollectableRow) (*partitionLabel, error) {
		l := &partitionLabel{}
		var ttl int
		err := r.Scan(&l.queueID, &l.queue, &l.namespace, &l.task, &l.partition, &ttl)
		l.ttl = time.Duration(ttl) * time.Second
		return l, err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFoundf("partition %s does not exist", pid)
	}
	if err != nil {
		return nil, fmt.Errorf("look up partition %s: %w", pid, err)
	}
	return l, nil
}

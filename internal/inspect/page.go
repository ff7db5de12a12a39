package inspect

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/internal/validate"
)

// Bounds of every list.
const (
	PageLimitDefault = 100
	PageLimitMax     = 10_000
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

// queueID returns the id of the named queue, or apierr.NotFound.
func (r *Reader) queueID(ctx context.Context, name string) (int64, error) {
	if err := validate.Name("queue", name); err != nil {
		return 0, err
	}
	var id int64
	err := r.pool.QueryRow(ctx, `SELECT id FROM lethe.queues WHERE name = $1`, name).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, notFoundf("queue %q does not exist", name)
	}
	if err != nil {
		return 0, fmt.Errorf("look up queue %s: %w", name, err)
	}
	return id, nil
}

// partitionOf returns the id of a partition of the named queue, or
// apierr.NotFound.
func (r *Reader) partitionOf(ctx context.Context, queue, partition string) (uuid.UUID, error) {
	if err := validate.Name("partition", partition); err != nil {
		return uuid.Nil, err
	}
	qid, err := r.queueID(ctx, queue)
	if err != nil {
		return uuid.Nil, err
	}
	var pid uuid.UUID
	err = r.pool.QueryRow(ctx, `SELECT id FROM lethe.partitions WHERE queue_id = $1 AND name = $2`, qid, partition).Scan(&pid)
	if errors.Is(err, pgx.ErrNoRows) {
		return uuid.Nil, notFoundf("queue %q has no partition %q", queue, partition)
	}
	if err != nil {
		return uuid.Nil, fmt.Errorf("look up partition %s/%s: %w", queue, partition, err)
	}
	return pid, nil
}

// partitionLabel is where a partition sits, for answers.
type partitionLabel struct {
	queueID   int64
	queue     string
	namespace string
	task      string
	partition string
	// ttl is the queue's ttl (0: none).
	ttl time.Duration
}

func (r *Reader) labelPartition(ctx context.Context, pid uuid.UUID) (*partitionLabel, error) {
	rows, err := r.pool.Query(ctx, `
		SELECT q.id, q.name, q.namespace, q.task, p.name, coalesce((q.options->>'ttl')::int, 0)
		  FROM lethe.partitions p JOIN lethe.queues q ON q.id = p.queue_id
		 WHERE p.id = $1`, pid)
	if err != nil {
		return nil, fmt.Errorf("look up partition %s: %w", pid, err)
	}
	l, err := pgx.CollectExactlyOneRow(rows, func(row pgx.CollectableRow) (*partitionLabel, error) {
		l := &partitionLabel{}
		var ttl int
		err := row.Scan(&l.queueID, &l.queue, &l.namespace, &l.task, &l.partition, &ttl)
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

// utcPtr shows times in UTC whatever the session's time zone.
func utcPtr(ts ...*time.Time) {
	for _, t := range ts {
		if t != nil {
			*t = t.UTC()
		}
	}
}

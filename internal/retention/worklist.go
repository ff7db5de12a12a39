package retention

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

//go:embed sql/worklist.sql
var worklistSQL string

// partitionWork is one partition as a cycle sees it: its queue's cutoffs
// (nil: rule off) and which phases have something to do.
type partitionWork struct {
	Queue           string
	PartitionID     uuid.UUID
	Partition       string
	RetentionCutoff *time.Time
	CompletedCutoff *time.Time
	EvictCutoff     *time.Time
	TxnCutoff       time.Time
	HeadBase        *int64     // first retained segment; nil when the partition is empty
	HeadFirstAt     *time.Time // its oldest frame
	Bound           *int64     // MIN(committed)+1 over the cursors; nil without cursors
	RetentionDue    bool
	EvictDue        bool
	TxnsDue         bool
}

// querier is what both a pooled connection and the pool offer.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// loadWork reads the work list at now, of every queue or of one.
func loadWork(ctx context.Context, q querier, now time.Time, queue string) ([]partitionWork, error) {
	rows, err := q.Query(ctx, worklistSQL, now, queue)
	if err != nil {
		return nil, fmt.Errorf("retention: build work list: %w", err)
	}
	work, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (partitionWork, error) {
		var w partitionWork
		err := r.Scan(&w.Queue, &w.PartitionID, &w.Partition,
			&w.RetentionCutoff, &w.CompletedCutoff, &w.EvictCutoff, &w.TxnCutoff,
			&w.HeadBase, &w.HeadFirstAt, &w.Bound, &w.RetentionDue, &w.EvictDue, &w.TxnsDue)
		return w, err
	})
	if err != nil {
		return nil, fmt.Errorf("retention: build work list: %w", err)
	}
	return work, nil
}

// queueCount is how many distinct queues the work list covers.
func queueCount(work []partitionWork) int {
	n := 0
	for i := range work {
		if i == 0 || work[i].Queue != work[i-1].Queue {
			n++
		}
	}
	return n
}

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

// cutoffs are a queue's rules at the cycle's now: the time before which
// each deletes (nil: rule off).
type cutoffs struct {
	RetentionCutoff *time.Time
	CompletedCutoff *time.Time
	EvictCutoff     *time.Time
	TxnCutoff       time.Time
}

// queueWork is one queue as a cycle sees it: its cutoffs, its footprint
// and the partitions that have something to do.
type queueWork struct {
	Queue string
	cutoffs
	Partitions      int
	EmptyPartitions int
	// OldestAt is the first frame of the queue's oldest head segment.
	OldestAt *time.Time
	// WindowLagSeconds is how much older than its window that is.
	WindowLagSeconds float64
	Due              []partitionWork
	// HeadsRead counts the partitions whose head segment the work list
	// read; heads are those of a queue with no deleting rule, for the
	// next work list.
	HeadsRead int
	heads     heads
}

// partitionWork is one partition with work, and which phases it needs.
type partitionWork struct {
	Queue string
	cutoffs
	PartitionID  uuid.UUID
	Partition    string
	RetentionDue bool
	EvictDue     bool
	TxnsDue      bool
}

// querier is what both a dedicated connection and the pool offer.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// loadWork reads the work list at now, of every queue or of one, trusting
// the known heads of queues with no deleting rule (none: every head is
// read).
func loadWork(ctx context.Context, q querier, now time.Time, queue string, known heads) ([]queueWork, error) {
	rows, err := q.Query(ctx, worklistSQL, now, queue, known.Partitions, known.Watermarks, known.FirstAt)
	if err != nil {
		return nil, fmt.Errorf("retention: build work list: %w", err)
	}
	work, err := pgx.CollectRows(rows, scanQueueWork)
	if err != nil {
		return nil, fmt.Errorf("retention: build work list: %w", err)
	}
	return work, nil
}

func scanQueueWork(r pgx.CollectableRow) (queueWork, error) {
	var w queueWork
	var ids []uuid.UUID
	var names []string
	var retention, evict, txns []bool
	err := r.Scan(&w.Queue, &w.RetentionCutoff, &w.CompletedCutoff, &w.EvictCutoff, &w.TxnCutoff,
		&w.Partitions, &w.EmptyPartitions, &w.OldestAt, &w.WindowLagSeconds,
		&ids, &names, &retention, &evict, &txns,
		&w.HeadsRead, &w.heads.Partitions, &w.heads.Watermarks, &w.heads.FirstAt)
	if err != nil {
		return w, err
	}
	w.Due = make([]partitionWork, len(ids))
	for i := range ids {
		w.Due[i] = partitionWork{Queue: w.Queue, cutoffs: w.cutoffs, PartitionID: ids[i], Partition: names[i],
			RetentionDue: retention[i], EvictDue: evict[i], TxnsDue: txns[i]}
	}
	return w, nil
}

// partitionsDue counts the partitions of the work list with work.
func partitionsDue(work []queueWork) int {
	n := 0
	for _, q := range work {
		n += len(q.Due)
	}
	return n
}

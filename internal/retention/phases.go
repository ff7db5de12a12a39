package retention

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// retentionPhase applies retentionSeconds and completedRetentionSeconds to
// every partition whose head segment qualifies.
func (s *Service) retentionPhase(ctx context.Context, conn *pgx.Conn, work []queueWork, now time.Time, res *CycleResult) error {
	return s.eachPartition(ctx, conn, PhaseRetention, work, res,
		func(w partitionWork) bool { return w.RetentionDue },
		func(w partitionWork) error {
			return s.sweepPartition(ctx, conn, PhaseRetention, w, w.RetentionCutoff, w.CompletedCutoff, nil, now, res)
		})
}

// evictionPhase applies maxWaitTimeSeconds: whole segments older than the
// window go, consumed or not, leased or not, for every group.
func (s *Service) evictionPhase(ctx context.Context, conn *pgx.Conn, work []queueWork, now time.Time, res *CycleResult) error {
	return s.eachPartition(ctx, conn, PhaseEviction, work, res,
		func(w partitionWork) bool { return w.EvictDue },
		func(w partitionWork) error {
			return s.sweepPartition(ctx, conn, PhaseEviction, w, nil, nil, w.EvictCutoff, now, res)
		})
}

// eachPartition runs one phase on every partition of the work list that
// needs it. A partition whose step fails is recorded and skipped; the
// phase goes on with the others unless the cycle must stop.
func (s *Service) eachPartition(ctx context.Context, conn *pgx.Conn, phase string, work []queueWork, res *CycleResult,
	due func(partitionWork) bool, run func(partitionWork) error) error {
	for _, q := range work {
		for _, w := range q.Due {
			if !due(w) {
				continue
			}
			if err := run(w); err != nil {
				if err := s.failed(ctx, conn, phase, w.Queue, w.Partition, err, res); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// sweepPartition calls lethe.sweep_step on one partition until it reports
// done. Each call is its own transaction.
func (s *Service) sweepPartition(ctx context.Context, conn *pgx.Conn, phase string, w partitionWork,
	retention, completed, evict *time.Time, now time.Time, res *CycleResult) error {
	for n := 0; ; n++ {
		var done bool
		err := s.step(ctx, phase, n, func(sctx context.Context) error {
			var err error
			done, err = s.sweepStep(sctx, conn, w, retention, completed, evict, now, res)
			return err
		})
		if err != nil {
			return fmt.Errorf("sweep step %d: %w", n, err)
		}
		if done {
			return nil
		}
	}
}

func (s *Service) sweepStep(ctx context.Context, conn *pgx.Conn, w partitionWork,
	retention, completed, evict *time.Time, now time.Time, res *CycleResult) (bool, error) {
	rows, err := conn.Query(ctx, `SELECT rule, segments, frames, bytes, done FROM lethe.sweep_step($1, $2, $3, $4, $5, $6)`,
		w.PartitionID, retention, completed, evict, s.cfg.BatchSize, now)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	done := true
	for rows.Next() {
		var rule *string
		var a Amount
		var segs int32
		var stepDone bool
		if err := rows.Scan(&rule, &segs, &a.Frames, &a.Bytes, &stepDone); err != nil {
			return false, err
		}
		a.Segments = int64(segs)
		done = done && stepDone
		if rule == nil {
			continue
		}
		if total := res.amount(*rule); total != nil {
			total.add(a)
		}
		s.metrics.deleted(*rule, a)
	}
	return done, rows.Err()
}

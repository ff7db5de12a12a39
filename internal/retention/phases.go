package retention

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// retentionPhase applies retentionSeconds and completedRetentionSeconds to
// every partition whose head segment qualifies.
func (s *Service) retentionPhase(ctx context.Context, conn *pgx.Conn, work []partitionWork, now time.Time, res *CycleResult) error {
	for _, w := range work {
		if !w.RetentionDue {
			continue
		}
		if err := s.sweepPartition(ctx, conn, PhaseRetention, w, w.RetentionCutoff, w.CompletedCutoff, nil, now, res); err != nil {
			return err
		}
	}
	return nil
}

// evictionPhase applies maxWaitTimeSeconds: whole segments older than the
// window go, consumed or not, leased or not, for every group.
func (s *Service) evictionPhase(ctx context.Context, conn *pgx.Conn, work []partitionWork, now time.Time, res *CycleResult) error {
	for _, w := range work {
		if !w.EvictDue {
			continue
		}
		if err := s.sweepPartition(ctx, conn, PhaseEviction, w, nil, nil, w.EvictCutoff, now, res); err != nil {
			return err
		}
	}
	return nil
}

// sweepPartition calls lethe.sweep_step on one partition until it reports
// done. Each call is its own transaction.
func (s *Service) sweepPartition(ctx context.Context, conn *pgx.Conn, phase string, w partitionWork,
	retention, completed, evict *time.Time, now time.Time, res *CycleResult) error {
	for n := 0; ; n++ {
		if err := s.between(ctx, phase, n); err != nil {
			return fmt.Errorf("retention: %s phase on %s/%s: %w", phase, w.Queue, w.Partition, err)
		}
		done, err := s.sweepStep(ctx, conn, w, retention, completed, evict, now, res)
		if err != nil {
			return fmt.Errorf("retention: %s phase on %s/%s: %w", phase, w.Queue, w.Partition, err)
		}
		if done {
			return nil
		}
	}
}

func (s *Service) sweepStep(ctx context.Context, conn *pgx.Conn, w partitionWork,
	retention, completed, evict *time.Time, now time.Time, res *CycleResult) (bool, error) {
	sctx, cancel := s.stepContext(ctx)
	defer cancel()
	rows, err := conn.Query(sctx, `SELECT rule, segments, frames, bytes, done FROM lethe.sweep_step($1, $2, $3, $4, $5, $6)`,
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

// txnPhase purges the transaction-id hash sidecar of every partition, on
// its own clock: GREATEST(dedupWindowSeconds, completedRetentionSeconds,
// 900 s), whether or not retention is on.
func (s *Service) txnPhase(ctx context.Context, conn *pgx.Conn, work []partitionWork, res *CycleResult) error {
	for _, w := range work {
		if !w.TxnsDue {
			continue
		}
		for n := 0; ; n++ {
			if err := s.between(ctx, PhaseTxns, n); err != nil {
				return fmt.Errorf("retention: hash purge on %s/%s: %w", w.Queue, w.Partition, err)
			}
			purged, done, err := s.txnStep(ctx, conn, w)
			res.TxnsPurged += purged
			s.metrics.txnsPurged.Add(float64(purged))
			if err != nil {
				return fmt.Errorf("retention: hash purge on %s/%s: %w", w.Queue, w.Partition, err)
			}
			if done {
				break
			}
		}
	}
	return nil
}

func (s *Service) txnStep(ctx context.Context, conn *pgx.Conn, w partitionWork) (int64, bool, error) {
	sctx, cancel := s.stepContext(ctx)
	defer cancel()
	var purged int32
	var done bool
	err := conn.QueryRow(sctx, `SELECT purged, done FROM lethe.purge_txns_step($1, $2, $3)`,
		w.PartitionID, w.TxnCutoff, s.cfg.BatchSize).Scan(&purged, &done)
	return int64(purged), done, err
}

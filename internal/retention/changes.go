package retention

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/internal/store"
	"github.com/lethe-mq/lethe/internal/tier"
)

// runningChange is a queue whose tier change runs.
type runningChange struct {
	queueID int64
	queue   string
	tier    string
}

// changePhase works on every running tier change, every cycle: the
// queue's segments outside its tier (and the held area) are settled
// partition by partition (kept by the new tier: moved into it; else
// pending: held; else deleted), then the change finishes and a value that
// waited is requested.
func (s *Service) changePhase(ctx context.Context, conn *pgx.Conn, now time.Time, res *CycleResult) error {
	rows, err := conn.Query(ctx, `
		SELECT c.queue_id, q.name, q.retention_tier FROM lethe.retention_changes c
		  JOIN lethe.queues q ON q.id = c.queue_id
		 WHERE c.state = 'running' ORDER BY q.name`)
	if err != nil {
		return fmt.Errorf("retention: running tier changes: %w", err)
	}
	changes, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (runningChange, error) {
		var c runningChange
		return c, r.Scan(&c.queueID, &c.queue, &c.tier)
	})
	if err != nil {
		return fmt.Errorf("retention: running tier changes: %w", err)
	}
	for _, c := range changes {
		if err := s.runChange(ctx, conn, c, now, res); err != nil {
			if err := s.failed(ctx, conn, PhaseChanges, c.queue, "", err, res); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *Service) runChange(ctx context.Context, conn *pgx.Conn, c runningChange, now time.Time, res *CycleResult) error {
	outside := tier.Outside(c.tier)
	var pids []uuid.UUID
	err := s.step(ctx, PhaseChanges, 0, func(sctx context.Context) error {
		var err error
		pids, err = store.QueueTierWork(sctx, conn, c.queueID, outside)
		return err
	})
	if err != nil {
		return err
	}
	for _, pid := range pids {
		if err := s.settleChange(ctx, conn, pid, outside, now, res); err != nil {
			return fmt.Errorf("partition %s: %w", pid, err)
		}
	}
	var finished bool
	err = s.step(ctx, PhaseChanges, 0, func(sctx context.Context) error {
		return conn.QueryRow(sctx, `SELECT lethe.finish_tier_change($1, $2)`, c.queueID, now).Scan(&finished)
	})
	if err != nil {
		return err
	}
	if finished {
		res.ChangesFinished++
		s.cfg.Logger.Info("retention tier change done", "queue", c.queue, "tier", c.tier)
	}
	return nil
}

func (s *Service) settleChange(ctx context.Context, conn *pgx.Conn, pid uuid.UUID, outside []string, now time.Time, res *CycleResult) error {
	from := int64(0)
	for n := 0; ; n++ {
		var st store.Settled
		err := s.step(ctx, PhaseChanges, n, timed(&res.SettleWork, func(sctx context.Context) error {
			var err error
			st, err = store.SettleStep(sctx, conn, pid, "", outside, from, s.cfg.BatchSize, now)
			return err
		}))
		if err != nil {
			return err
		}
		s.settled(res, st)
		if st.Done {
			return nil
		}
		from = st.Next
	}
}

// settled counts what a settle step did: in the cycle's result and in the
// moved and deleted counters.
func (s *Service) settled(res *CycleResult, st store.Settled) {
	res.addSettled(st)
	for rule, m := range st.ByRule {
		switch rule {
		case RuleTierChange:
			s.metrics.deleted(rule, Amount{Segments: m.Segments, Frames: m.Frames, Bytes: m.Bytes})
		case RuleTierMove, RuleHeldMove:
			s.metrics.moved.WithLabelValues(rule).Add(float64(m.Frames))
		}
	}
}

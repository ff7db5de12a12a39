package retention

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// PhaseReclaim names the reclaim phase in the test hook, the logs and
// lethe_retention_step_failures_total.
const PhaseReclaim = "reclaim"

// Reclaimer is a rule that reclaims rows of tables outside the segment log
// (streams' state, traces), run by the loop as part of its reclaim phase:
// the loop calls Step, under its lock, duty cycle, step timeout and test
// hook, until Step reports done.
type Reclaimer interface {
	// Rule names the rule in logs and metrics, as its audit rows do.
	Rule() string
	// Step deletes at most batch rows the rule says are due at now (the
	// cycle's one clock reading) in one short transaction of its own on
	// conn, writing the audit row of what it deleted with them. done says
	// nothing due is left.
	Step(ctx context.Context, conn *pgx.Conn, now time.Time, batch int) (deleted int64, done bool, err error)
}

// reclaimPhase runs every reclaimer to completion. A reclaimer whose step
// fails is recorded and skipped; the phase goes on with the others unless
// the cycle must stop.
func (s *Service) reclaimPhase(ctx context.Context, conn *pgx.Conn, now time.Time, res *CycleResult) error {
	for _, r := range s.cfg.Reclaimers {
		if err := s.reclaim(ctx, conn, r, now, res); err != nil {
			if err := s.failed(ctx, conn, PhaseReclaim, "", "", err, res); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *Service) reclaim(ctx context.Context, conn *pgx.Conn, r Reclaimer, now time.Time, res *CycleResult) error {
	for n := 0; ; n++ {
		var deleted int64
		var done bool
		err := s.step(ctx, PhaseReclaim, n, func(sctx context.Context) error {
			var err error
			deleted, done, err = r.Step(sctx, conn, now, s.cfg.BatchSize)
			return err
		})
		if err != nil {
			return fmt.Errorf("%s step %d: %w", r.Rule(), n, err)
		}
		if deleted > 0 {
			if res.Reclaimed == nil {
				res.Reclaimed = map[string]int64{}
			}
			res.Reclaimed[r.Rule()] += deleted
			s.metrics.reclaimed.WithLabelValues(r.Rule()).Add(float64(deleted))
		}
		if done {
			return nil
		}
	}
}

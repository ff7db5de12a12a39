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

// Reclaimer is a rule another package contributes (Config.Reclaimers:
// streams' state, traces) for rows of tables outside the segment log,
// which that package owns with their SQL. The loop runs each as a Rule of
// its registry, where reclaimSlot stands: it calls Step, under its lock,
// duty cycle, step timeout and test hook, until Step reports done.
type Reclaimer interface {
	// Rule names the rule in logs and metrics, as its audit rows do.
	Rule() string
	// Options are the settings the rule reads; Due says how it finds what
	// is due (an index on what is due); Bound is the bound it promises.
	Options() []string
	Due() string
	Bound() string
	// Step deletes at most batch rows the rule says are due at now (the
	// cycle's one clock reading) in one short transaction of its own on
	// conn, writing the audit row of what it deleted with them. done says
	// nothing due is left.
	Step(ctx context.Context, conn *pgx.Conn, now time.Time, batch int) (deleted int64, done bool, err error)
}

// reclaimSlot stands in the registry where the contributed rules run.
type reclaimSlot struct{ rule }

// reclaimRule is a contributed Reclaimer as a Rule of the registry.
type reclaimRule struct{ r Reclaimer }

func (r reclaimRule) Name() string      { return r.r.Rule() }
func (reclaimRule) Phase() string       { return PhaseReclaim }
func (r reclaimRule) Reasons() []string { return []string{r.r.Rule()} }
func (r reclaimRule) Options() []string { return r.r.Options() }
func (r reclaimRule) Due() string       { return r.r.Due() }
func (r reclaimRule) Bound() string     { return r.r.Bound() }
func (reclaimRule) appliedBy() string   { return "" }

// step runs the rule's steps until one reports done.
func (r reclaimRule) step() stepFunc {
	return func(ctx context.Context, s *Service, c *cycleRun) error {
		for n := 0; ; n++ {
			var deleted int64
			var done bool
			err := s.step(ctx, PhaseReclaim, n, func(sctx context.Context) error {
				var err error
				deleted, done, err = r.r.Step(sctx, c.conn, c.now, s.cfg.BatchSize)
				return err
			})
			if err != nil {
				return fmt.Errorf("%s step %d: %w", r.r.Rule(), n, err)
			}
			if deleted > 0 {
				if c.res.Reclaimed == nil {
					c.res.Reclaimed = map[string]int64{}
				}
				c.res.Reclaimed[r.r.Rule()] += deleted
				s.metrics.reclaimed.WithLabelValues(r.r.Rule()).Add(float64(deleted))
			}
			if done {
				return nil
			}
		}
	}
}

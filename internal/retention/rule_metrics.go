package retention

import "context"

// ruleMetricsPurge ages out lethe's own observability tables (the
// retention and reclaim history, the cycle records) on
// METRICS_RETENTION_DAYS, oldest first by an index on their time column. A
// failure is logged and counted (lethe_retention_metrics_purge_failures_total)
// and swallowed: it cannot undo or stop what the cycle committed.
type ruleMetricsPurge struct{ rule }

var metricsPurgeRule = ruleMetricsPurge{rule{name: PhaseMetrics, phase: PhaseMetrics,
	options: []string{"METRICS_RETENTION_DAYS"},
	due:     "each table's index on its time column: the oldest rows first, BatchSize at a time",
	bound:   "between D and D + I after their cycle"}}

func (ruleMetricsPurge) step() stepFunc {
	return func(ctx context.Context, s *Service, c *cycleRun) error {
		if cutoff, ok := daysBefore(c.now, s.cfg.MetricsRetentionDays); ok {
			s.purge(ctx, c.conn, c.res,
				purgeTarget{table: "lethe.retention_history", column: "executed_at", cutoff: cutoff},
				purgeTarget{table: "lethe.retention_losses", column: "executed_at", cutoff: cutoff},
				purgeTarget{table: "lethe.retention_runs", column: "started_at", cutoff: cutoff},
				purgeTarget{table: "lethe.reclaim_history", column: "executed_at", cutoff: cutoff})
		}
		return nil
	}
}

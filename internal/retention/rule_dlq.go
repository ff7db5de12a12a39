package retention

import "context"

// RuleDLQRetention names the dead-letter retention rule.
const RuleDLQRetention = "dlq_retention"

// ruleDLQ ages out dead letters on DLQ_RETENTION_DAYS (off by default),
// oldest first; a queue under a retention hold keeps its dead letters.
// Like the metrics purge, a failure is logged, counted and swallowed.
type ruleDLQ struct{ rule }

var dlqRule = ruleDLQ{rule{name: RuleDLQRetention, phase: PhaseMetrics,
	options: []string{"DLQ_RETENTION_DAYS"},
	due:     "lethe.dead_letters' index on failed_at: the oldest first, BatchSize at a time",
	bound:   "between D and D + I after their failure; else when replayed or deleted"}}

func (ruleDLQ) step() stepFunc {
	return func(ctx context.Context, s *Service, c *cycleRun) error {
		if cutoff, ok := daysBefore(c.now, s.cfg.DLQRetentionDays); ok {
			s.purge(ctx, c.conn, c.res, purgeTarget{table: "lethe.dead_letters", column: "failed_at", deadLetters: true,
				cutoff: cutoff, where: `AND NOT EXISTS (SELECT 1 FROM lethe.partitions p
				WHERE p.id = partition_id AND lethe.queue_held(p.queue_id))`})
		}
		return nil
	}
}

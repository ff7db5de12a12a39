package retention

import "context"

// RulePartitionCleanup names partition cleanup in the history, the
// metrics and the API.
const RulePartitionCleanup = "partition_cleanup"

// ruleCleanup deletes partitions that stayed empty and idle for
// PARTITION_CLEANUP_DAYS, then idle 'all'-mode subscriptions of queues
// that hold nothing, at most once a minute across replicas.
type ruleCleanup struct{ rule }

var cleanupRule = ruleCleanup{rule{name: RulePartitionCleanup, phase: PhaseCleanup,
	reasons: []string{RulePartitionCleanup},
	options: []string{"PARTITION_CLEANUP_DAYS", "LETHE_PARTITION_CLEANUP_ENABLED"},
	due:     "empty partitions (next_offset = low_watermark) idle past the window, in id order, checked again under the partition's lock",
	bound:   "between D and D + a minute + I after the last push and cursor change"}}

func (ruleCleanup) step() stepFunc {
	return func(ctx context.Context, s *Service, c *cycleRun) error {
		return s.cleanupPhase(ctx, c.conn, c.now, c.res)
	}
}

package retention

import (
	"context"

	"github.com/lethe-mq/lethe/client/api"
)

// RuleRetention names retentionSeconds in the history, the metrics and
// the API.
const RuleRetention = "retention"

// ruleRetention is retentionSeconds (with retentionEnabled): every
// segment whose newest message is older than the window goes, read or
// not; an unread loss is recorded per group. Its step, lethe.sweep_step
// on each partition the work list marks, applies completed retention too.
type ruleRetention struct{ rule }

var retentionRule = ruleRetention{rule{name: RuleRetention, phase: PhaseRetention, reasons: []string{RuleRetention},
	options: []string{"retentionEnabled", "retentionSeconds"},
	due: "the work list (sql/worklist.sql): the partitions whose head segment is past a cutoff, " +
		"read from each partition's low watermark and head, not its segments",
	bound: "between W and W + I after the newest message of its segment was pushed"}}

func (ruleRetention) step() stepFunc {
	return func(ctx context.Context, s *Service, c *cycleRun) error {
		return s.retentionPhase(ctx, c.conn, c.work, c.now, c.res)
	}
}

func (ruleRetention) explain(q explainQueue, cfg Config) (api.RetentionBound, bool) {
	if !q.Enabled || q.Retention <= 0 {
		return api.RetentionBound{}, false
	}
	return secondsBound("retentionSeconds", "every message, read or not (an unread loss is recorded per group)",
		q.Retention, cfg.Interval), true
}

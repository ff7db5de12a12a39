package retention

import (
	"context"

	"github.com/lethe-mq/lethe/client/api"
)

// RuleMaxWait names maxWaitTimeSeconds' eviction in the history, the
// metrics and the API.
const RuleMaxWait = "max_wait"

// ruleMaxWait is maxWaitTimeSeconds (no retentionEnabled needed): whole
// segments older than the window go, consumed or not, leased or not, for
// every group; an unread loss is recorded per group.
type ruleMaxWait struct{ rule }

var maxWaitRule = ruleMaxWait{rule{name: RuleMaxWait, phase: PhaseEviction, reasons: []string{RuleMaxWait},
	options: []string{"maxWaitTimeSeconds"},
	due:     "the work list (sql/worklist.sql): the partitions whose head segment is past the eviction cutoff",
	bound:   "between W and W + I after the newest message of its segment was pushed, leased ones included"}}

func (ruleMaxWait) step() stepFunc {
	return func(ctx context.Context, s *Service, c *cycleRun) error {
		return s.evictionPhase(ctx, c.conn, c.work, c.now, c.res)
	}
}

func (ruleMaxWait) explain(q explainQueue, cfg Config) (api.RetentionBound, bool) {
	if q.MaxWait <= 0 {
		return api.RetentionBound{}, false
	}
	return secondsBound("maxWaitTimeSeconds", "every message, leased ones included (an unread loss is recorded per group)",
		q.MaxWait, cfg.Interval), true
}

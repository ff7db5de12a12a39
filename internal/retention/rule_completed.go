package retention

import "github.com/lethe-mq/lethe/client/api"

// RuleCompletedRetention names completedRetentionSeconds in the history,
// the metrics and the API.
const RuleCompletedRetention = "completed_retention"

// ruleCompleted is completedRetentionSeconds (with retentionEnabled):
// segments every counted group has consumed (lethe.completed_bound), once
// their newest message is older than the window. It never deletes unread
// data. The retention rule's step applies it: one lethe.sweep_step call
// takes both cutoffs.
type ruleCompleted struct{ rule }

var completedRule = ruleCompleted{rule{name: RuleCompletedRetention, phase: PhaseRetention,
	reasons: []string{RuleCompletedRetention},
	options: []string{"retentionEnabled", "completedRetentionSeconds", "requiredGroups"},
	due:     "the work list, as retentionSeconds: its cutoff is one more column of the same partitions",
	bound: "within I after the later of: the newest message of its segment is W old, the last counted group " +
		"has consumed the whole segment; never while a counted group has not",
	by: RuleRetention}}

func (ruleCompleted) explain(q explainQueue, cfg Config) (api.RetentionBound, bool) {
	if !q.Enabled || q.Completed <= 0 {
		return api.RetentionBound{}, false
	}
	return secondsBound("completedRetentionSeconds", "messages every subscribed and required group has consumed",
		q.Completed, cfg.Interval), true
}

package retention

import "context"

// RuleTierChange names what a tier change deleted, RuleTierMove and
// RuleHeldMove what a settle step moved into a queue's tier or to the held
// area, in the history, the metrics and the API.
const (
	RuleTierChange = "tier_change"
	RuleTierMove   = "tier_move"
	RuleHeldMove   = "held_move"
)

// ruleTierChange settles a queue whose retentionTier changed: its
// segments outside its tier are moved into it (kept by the new tier),
// to the held area (pending) or deleted, partition by partition, then
// the change finishes and a value that waited is requested.
type ruleTierChange struct{ rule }

var tierChangeRule = ruleTierChange{rule{name: RuleTierChange, phase: PhaseChanges,
	reasons: []string{RuleTierChange, RuleTierMove, RuleHeldMove},
	options: []string{"retentionTier", "requiredGroups"},
	due:     "lethe.retention_changes in state running, then the queue's partitions holding segments outside its tier (store.QueueTierWork)",
	bound:   "from the first cycle after the change is confirmed, in bounded settle steps"}}

func (ruleTierChange) step() stepFunc {
	return func(ctx context.Context, s *Service, c *cycleRun) error {
		return s.changePhase(ctx, c.conn, c.now, c.res)
	}
}

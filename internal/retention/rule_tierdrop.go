package retention

import (
	"context"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/tier"
)

// RuleTierDrop names what went with a dropped tier leaf, and
// RuleQuarantinePurge the dead letters that went with it under
// quarantined: purge, in the history, the metrics and the API.
const (
	RuleTierDrop        = "tier_drop"
	RuleQuarantinePurge = "quarantine_purge"
)

// ruleTierDrop is retentionTier 1w, 3w, 7w: whole time partitions (leaves)
// are dropped once wholly older than the tier's window, pending messages
// moved to the held area first. Its step is the tier check, every
// RETENTION_TIER_INTERVAL across replicas; it applies the held area too.
type ruleTierDrop struct{ rule }

var tierDropRule = ruleTierDrop{rule{name: RuleTierDrop, phase: PhaseTiers,
	reasons: []string{RuleTierDrop, RuleTierMove, RuleHeldMove, RuleQuarantinePurge},
	options: []string{"retentionTier", "quarantined", "requiredGroups", "RETENTION_TIER_INTERVAL"},
	due:     "lethe.leaves: the leaves whose range ended a window ago (store.Leaves, one row per time partition)",
	bound: "between the tier's window and the window plus one partition plus RETENTION_TIER_INTERVAL after its push; " +
		"a pending message goes to the held area instead"}}

func (ruleTierDrop) step() stepFunc {
	return func(ctx context.Context, s *Service, c *cycleRun) error {
		return s.tierPhase(ctx, c.conn, c.now, c.forceTiers, c.res)
	}
}

func (ruleTierDrop) explain(q explainQueue, cfg Config) (api.RetentionBound, bool) {
	return tierBound(tier.Tier(q.Tier), q.Quarantined, cfg.TierInterval), true
}

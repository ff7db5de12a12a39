package retention

// registry lists every rule once, in the order a cycle runs them. The
// rules other packages contribute (Config.Reclaimers: streams' state,
// traces) run where reclaimSlot stands, in the order they were given.
// Adding a rule touches its file, its test, this list and
// docs/retention.md's bounds at a glance (TestRegistryRulesAreDocumented).
var registry = []Rule{
	retentionRule,
	completedRule,
	maxWaitRule,
	tierChangeRule,
	tierDropRule,
	heldRule,
	sidecarRule,
	reclaimSlot{},
	metricsPurgeRule,
	dlqRule,
	cleanupRule,
}

// rules is the registry as this service runs it: the contributed reclaim
// rules in reclaimSlot's place.
func (s *Service) rules() []Rule {
	out := make([]Rule, 0, len(registry)+len(s.cfg.Reclaimers))
	for _, r := range registry {
		if _, ok := r.(reclaimSlot); ok {
			for _, rc := range s.cfg.Reclaimers {
				out = append(out, reclaimRule{rc})
			}
			continue
		}
		out = append(out, r)
	}
	return out
}

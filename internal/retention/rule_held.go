package retention

// RuleHeldDrop names what went with a dropped month of the held area in
// the history, the metrics and the API.
const RuleHeldDrop = "held_drop"

// ruleHeld is the held area: messages pending when their tier partition
// expired stay in segments_held until no message of their month is
// pending, then the month goes whole. The tier check applies it.
type ruleHeld struct{ rule }

var heldRule = ruleHeld{rule{name: RuleHeldDrop, phase: PhaseTiers, reasons: []string{RuleHeldDrop},
	options: []string{"requiredGroups"},
	due:     "lethe.leaves: the held area's months that are over, then whether any of their segments is pending (store.LeafPending)",
	bound:   "at the first tier check after their month is over with none of that month's held messages pending",
	by:      RuleTierDrop}}

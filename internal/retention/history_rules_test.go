package retention

import (
	"regexp"
	"slices"
	"testing"

	"github.com/lethe-mq/lethe/client/api"
)

// The rules the history route and the CLI accept (api.HistoryRules) are
// exactly those lethe.retention_history's check constraint lets a step
// write, and the cycle counts each tier rule it writes.
func TestHistoryRulesMatchTheTable(t *testing.T) {
	t.Parallel()
	e := setup(t)
	var def string
	if err := e.pool.QueryRow(e.ctx, `SELECT pg_get_constraintdef(oid) FROM pg_constraint
		WHERE conname = 'retention_history_rule_check' AND conrelid = 'lethe.retention_history'::regclass`).Scan(&def); err != nil {
		t.Fatal(err)
	}
	var inTable []string
	for _, m := range regexp.MustCompile(`'([a-z_]+)'::text`).FindAllStringSubmatch(def, -1) {
		inTable = append(inTable, m[1])
	}
	slices.Sort(inTable)
	accepted := slices.Sorted(slices.Values(api.HistoryRules))
	if !slices.Equal(inTable, accepted) {
		t.Fatalf("retention_history allows %v, the API accepts %v", inTable, accepted)
	}
	for _, rule := range []string{RuleTierDrop, RuleHeldDrop, RuleTierChange, RuleHeldMove, RuleTierMove} {
		if !slices.Contains(api.HistoryRules, rule) {
			t.Errorf("the cycle writes rule %s, which the API does not accept", rule)
		}
	}
}

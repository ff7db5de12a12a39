package retention

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/store"
	"github.com/lethe-mq/lethe/internal/streams"
	"github.com/lethe-mq/lethe/internal/traces"
)

// deployedRules is the registry as a replica runs it: with the reclaim
// rules streams and traces contribute.
func deployedRules() []Rule {
	var rc []Reclaimer
	for _, r := range (&streams.Service{}).Reclaimers() {
		rc = append(rc, r)
	}
	rc = append(rc, (&traces.Service{}).Reclaimer())
	return (&Service{cfg: Config{Reclaimers: rc}}).rules()
}

// glanceNames are the names of docs/retention.md's bounds at a glance,
// its second column.
func glanceNames(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile("../../docs/retention.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(raw), "## The bounds at a glance\n")
	if !ok {
		t.Fatal("docs/retention.md has no section \"The bounds at a glance\"")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var names []string
	tick := regexp.MustCompile("`([^`]+)`")
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, " | ")
		if !strings.HasPrefix(line, "| ") || len(cells) < 5 || strings.HasPrefix(line, "| rule |") {
			continue
		}
		for _, m := range tick.FindAllStringSubmatch(cells[1], -1) {
			names = append(names, m[1])
		}
	}
	if len(names) == 0 {
		t.Fatal("found no names in docs/retention.md's bounds at a glance; the table moved or its header changed")
	}
	return names
}

// Every rule of the registry has a name, a phase, how it finds what is
// due, a stated bound and a step (its own, or that of a rule before it
// that applies it), and its row in docs/retention.md's bounds at a
// glance: a rule added without its docs fails here, and so does a row
// naming a rule that is gone.
func TestRegistryRulesAreDocumented(t *testing.T) {
	t.Parallel()
	documented := glanceNames(t)
	seen := map[string]bool{}
	stepped := map[string]bool{}
	for i, r := range deployedRules() {
		name := r.Name()
		if name == "" || r.Phase() == "" || r.Due() == "" || r.Bound() == "" {
			t.Errorf("rule %d (%q): name, phase, due and bound must all be stated", i, name)
			continue
		}
		if seen[name] {
			t.Errorf("rule %q is registered twice", name)
		}
		seen[name] = true
		if r.step() != nil {
			stepped[name] = true
		} else if by := r.appliedBy(); !stepped[by] {
			t.Errorf("rule %q has no step and is applied by %q, which is not a rule with a step before it", name, by)
		}
		if len(r.Reasons()) > 0 && r.Reasons()[0] != name {
			t.Errorf("rule %q: its reasons %v must start with its name", name, r.Reasons())
		}
		if !slices.Contains(documented, name) {
			t.Errorf("rule %q is not in docs/retention.md's bounds at a glance", name)
		}
	}
	for _, name := range documented {
		if !seen[name] {
			if _, ok := deployedReason(name); !ok {
				t.Errorf("docs/retention.md's bounds at a glance names %q, which no rule is or writes", name)
			}
		}
	}
}

// deployedReason answers the rule whose rows carry reason.
func deployedReason(reason string) (Rule, bool) {
	for _, r := range deployedRules() {
		if slices.Contains(r.Reasons(), reason) {
			return r, true
		}
	}
	return nil, false
}

// The names the registry declares are the ones every other place spells:
// the API's constants and HistoryRules (the wire module, which imports
// nothing of the server), the store's, the dashboard's rule keys and the
// engine's gap reasons.
func TestRuleNamesAgreeWithTheRegistry(t *testing.T) {
	t.Parallel()
	var history []string
	for _, r := range registry {
		for _, reason := range r.Reasons() {
			if !slices.Contains(history, reason) {
				history = append(history, reason)
			}
		}
	}
	if got, want := slices.Sorted(slices.Values(api.HistoryRules)), slices.Sorted(slices.Values(history)); !slices.Equal(got, want) {
		t.Errorf("api.HistoryRules = %v; the registry's rules write %v", got, want)
	}
	for _, p := range [][2]string{
		{api.RuleRetention, RuleRetention}, {api.RuleCompletedRetention, RuleCompletedRetention},
		{api.RuleMaxWait, RuleMaxWait}, {api.RulePartitionCleanup, RulePartitionCleanup},
		{api.RuleTierDrop, RuleTierDrop}, {api.RuleHeldDrop, RuleHeldDrop}, {api.RuleTierChange, RuleTierChange},
		{api.RuleHeldMove, RuleHeldMove}, {api.RuleTierMove, RuleTierMove}, {api.RuleQuarantinePurge, RuleQuarantinePurge},
		{store.RuleTierDrop, RuleTierDrop}, {store.RuleHeldDrop, RuleHeldDrop}, {store.RuleTierChange, RuleTierChange},
		{store.RuleHeldMove, RuleHeldMove}, {store.RuleTierMove, RuleTierMove}, {store.RuleQuarantinePurge, RuleQuarantinePurge},
	} {
		if spelled, declared := p[0], p[1]; spelled != declared {
			t.Errorf("a copy spells the rule %q as %q", declared, spelled)
		}
	}
	for file, re := range map[string]*regexp.Regexp{
		"../dashboard/assets/retention.js": regexp.MustCompile(`key: '([a-z_]+)', label:`),
		"../engine/gap.go":                 regexp.MustCompile(`case ((?:"[a-z_]+"(?:, )?)+):`),
	} {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		matches := re.FindAllStringSubmatch(string(raw), -1)
		if len(matches) == 0 {
			t.Fatalf("%s spells no rule any more; update this test", file)
		}
		for _, m := range matches {
			for _, name := range strings.Split(m[1], ", ") {
				name = strings.Trim(name, `"`)
				if !slices.Contains(history, name) {
					t.Errorf("%s spells the rule %q, which no rule of the registry writes", file, name)
				}
			}
		}
	}
}

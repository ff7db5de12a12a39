package queuesfile

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestParseGoodFile(t *testing.T) {
	t.Parallel()
	qs, err := Parse([]byte(`queues:
  orders:
    retentionTier: 7d
    quarantined: purge
    requiredGroups: [billing, audit]
    leaseTime: 60
  logs:
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 2 || qs[0].Name != "orders" || qs[0].Line != 2 || qs[1].Name != "logs" {
		t.Fatalf("queues = %+v", qs)
	}
	var opts map[string]any
	_ = json.Unmarshal(qs[0].Options, &opts)
	if opts["retentionTier"] != "7d" || opts["leaseTime"] != float64(60) || len(qs[0].Named) != 4 {
		t.Fatalf("orders options = %s (named %v)", qs[0].Options, qs[0].Named)
	}
}

// Every problem is reported, each with its line and what is allowed.
func TestParseReportsEveryProblemWithItsLine(t *testing.T) {
	t.Parallel()
	_, err := Parse([]byte(`queues:
  orders:
    retentionTier: 5d
    quarantined: drop
    leaseTime: -1
    retentionTiers: 1w
  "":
    leaseTime: 1
`))
	var ps Problems
	if !errors.As(err, &ps) {
		t.Fatalf("Parse = %v, want Problems", err)
	}
	want := []struct {
		line int
		part string
	}{
		{3, "1w, 3w, 7w (or 7d, 21d, 49d) or forever"},
		{4, "keep or purge"},
		{5, "leaseTime must be between 1"},
		{6, `unknown option "retentionTiers"; the options are`},
		{7, "queue is required"},
	}
	if len(ps) != len(want) {
		t.Fatalf("problems:\n%v\nwant %d", ps, len(want))
	}
	for i, w := range want {
		if ps[i].Line != w.line || !strings.Contains(ps[i].Msg, w.part) {
			t.Errorf("problem %d = %v; want line %d with %q", i, ps[i], w.line, w.part)
		}
	}
}

func TestParseRefusesBadShapes(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{"", "- a\n- b\n", "queue:\n  a: {}\n", "queues: [a]\n", "queues:\n  a: 3\n",
		"queues:\n  a:\n  a:\n", "queues:\n  a: {leaseTime: 1\n"} {
		if _, err := Parse([]byte(doc)); err == nil {
			t.Errorf("Parse(%q) accepted it", doc)
		}
	}
}

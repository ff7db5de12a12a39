package retention

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// fakeReclaimer deletes nothing: it reports left rows in steps of at most
// batch, or fails, recording the now it was given.
type fakeReclaimer struct {
	rule  string
	left  int64
	fail  error
	steps int
	nows  []time.Time
}

func (f *fakeReclaimer) Rule() string      { return f.rule }
func (f *fakeReclaimer) Options() []string { return nil }
func (f *fakeReclaimer) Due() string       { return "a counter" }
func (f *fakeReclaimer) Bound() string     { return "when its counter runs out" }

func (f *fakeReclaimer) Step(_ context.Context, _ *pgx.Conn, now time.Time, batch int) (int64, bool, error) {
	f.steps++
	f.nows = append(f.nows, now)
	if f.fail != nil {
		return 0, false, f.fail
	}
	n := min(f.left, int64(batch))
	f.left -= n
	return n, n < int64(batch), nil
}

// The reclaim phase loops each rule's steps (at most BatchSize rows each)
// until one comes back short, with the cycle's one clock reading; a rule
// whose step fails is recorded under phase reclaim and the others still
// run, and so does the rest of the cycle.
func TestReclaimPhaseRunsEveryRuleInBoundedSteps(t *testing.T) {
	t.Parallel()
	broken := &fakeReclaimer{rule: "broken", fail: errors.New("table is gone")}
	drained := &fakeReclaimer{rule: "drained", left: 5}
	e := setup(t, func(c *Config) {
		c.BatchSize = 2
		c.Reclaimers = []Reclaimer{broken, drained}
	})
	res, err := e.svc.RunCycle(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if drained.steps != 3 || res.Reclaimed["drained"] != 5 || drained.left != 0 {
		t.Fatalf("drained rule: %d steps, reclaimed %v; want 3 steps of at most 2 reclaiming 5", drained.steps, res.Reclaimed)
	}
	for _, now := range drained.nows {
		if !now.Equal(res.StartedAt) {
			t.Fatalf("a step saw now %v, want the cycle's %v", now, res.StartedAt)
		}
	}
	if broken.steps != 1 || len(res.Failures) != 1 || res.Failures[0].Phase != PhaseReclaim ||
		!strings.Contains(res.Failures[0].Error(), "broken") {
		t.Fatalf("broken rule: %d steps, failures %v; want one failed step recorded under %s", broken.steps, res.Failures, PhaseReclaim)
	}
	if !strings.Contains(res.summary(), "drained=5") {
		t.Fatalf("the log line %q does not say what the rule reclaimed", res.summary())
	}
}

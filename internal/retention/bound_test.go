package retention

import (
	"strings"
	"testing"
	"time"
)

// subscribeNew registers group on queue with subscriptionMode new at the
// clock's now; the queue has nothing new, so no cursor is created.
func (e *env) subscribeNew(queue, group string) {
	e.t.Helper()
	resp, err := e.eng.Pop(e.ctx, enginePop(queue, group, "new"))
	if err != nil || len(resp.Messages) != 0 {
		e.t.Fatalf("subscribe %s with mode new: %v, %d messages; want none", group, err, len(resp.Messages))
	}
}

// cycleMatchingPlan runs a cycle after checking the dry run predicts it.
func (e *env) cycleMatchingPlan(queue string) CycleResult {
	e.t.Helper()
	st, err := e.svc.Status(e.ctx, queue)
	if err != nil {
		e.t.Fatal(err)
	}
	res := e.cycle()
	plan := st.Queues[0].NextCycle
	if plan.CompletedRetention != res.CompletedRetention || plan.Retention != res.Retention || plan.MaxWait != res.MaxWait {
		e.t.Fatalf("the dry run planned %+v; the cycle did retention %+v, completed %+v, max wait %+v",
			plan, res.Retention, res.CompletedRetention, res.MaxWait)
	}
	return res
}

func TestCompletedRetentionKeepsWhatEverySubscribedGroupStillWants(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.configure("q", map[string]any{"retentionEnabled": true, "completedRetentionSeconds": 60})
	e.pop("q", "", "offline", 1) // subscribes (mode all) and goes away: no cursor anywhere
	e.pushSegment("q", "a", 3)   // a: 0..2 at t0
	e.consume("q", "a", "early", 3)
	e.clock.Advance(10 * time.Minute)
	e.subscribeNew("q", "late") // owes only what comes after t0+10m
	e.clock.Advance(time.Second)
	e.pushSegment("q", "a", 2) // a: 3..4
	e.pushSegment("q", "b", 2) // b, a partition no group but early has read: 0..1
	e.consume("q", "a", "early", 2)
	e.consume("q", "b", "early", 2)
	e.clock.Advance(time.Hour)

	if res := e.cycleMatchingPlan("q"); res.CompletedRetention.Segments != 0 {
		t.Fatalf("deleted %+v while offline had read nothing; want nothing", res.CompletedRetention)
	}

	// offline reads a: a's first segment is older than late's subscription,
	// so nobody wants it any more; its second is still late's.
	e.consume("q", "a", "offline", 5)
	if res := e.cycleMatchingPlan("q"); res.CompletedRetention.Segments != 1 || res.CompletedRetention.Frames != 3 {
		t.Fatalf("after offline read a: deleted %+v, want a's first segment only", res.CompletedRetention)
	}
	if !equalInts(e.segments("q", "a"), []int64{3}) || !equalInts(e.segments("q", "b"), []int64{0}) {
		t.Fatalf("segments a %v, b %v; want [3] and [0]", e.segments("q", "a"), e.segments("q", "b"))
	}

	// late's first pop of a starts at its subscription time: offsets 3..4.
	if got := offsets(e.consume("q", "a", "late", 2)); !equalInts(got, []int64{3, 4}) {
		t.Fatalf("late read %v of a, want [3 4]", got)
	}
	if res := e.cycleMatchingPlan("q"); res.CompletedRetention.Segments != 1 || len(e.segments("q", "a")) != 0 {
		t.Fatalf("after late read a: deleted %+v, a has %v; want a empty", res.CompletedRetention, e.segments("q", "a"))
	}
	if len(e.segments("q", "b")) != 1 {
		t.Fatal("b was deleted while offline and late, without a cursor on it, had not read it")
	}

	// Nothing any group wanted was deleted: each still reads all of b.
	for _, g := range []string{"offline", "late"} {
		if got := offsets(e.consume("q", "b", g, 2)); !equalInts(got, []int64{0, 1}) {
			t.Fatalf("%s read %v of b, want [0 1]", g, got)
		}
	}
	if res := e.cycleMatchingPlan("q"); res.CompletedRetention.Segments != 1 {
		t.Fatalf("after every group read b: deleted %+v, want its segment", res.CompletedRetention)
	}
	for _, h := range e.history("q") {
		if h.Rule != RuleCompletedRetention || len(h.Lost) != 0 {
			t.Fatalf("history row %+v: want only completed_retention rows without losses", h)
		}
	}
}

func TestRetentionSecondsLosesUnreadDataAndNamesTheRule(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.configure("q", map[string]any{"retentionEnabled": true, "retentionSeconds": 3600, "completedRetentionSeconds": 60})
	e.pop("q", "", "offline", 1)
	e.pushSegment("q", "p", 4) // 0..3 at t0
	e.consume("q", "p", "early", 4)
	e.clock.Advance(time.Minute)
	e.subscribeNew("q", "late")
	e.clock.Advance(time.Second)
	e.pushSegment("q", "p", 2) // 4..5
	e.consume("q", "p", "early", 2)
	e.clock.Advance(2 * time.Hour)

	res := e.cycleMatchingPlan("q")
	if res.Retention.Segments != 2 || res.CompletedRetention.Segments != 0 {
		t.Fatalf("deleted retention %+v, completed %+v; want both segments by retention only", res.Retention, res.CompletedRetention)
	}
	h := e.history("q")
	if len(h) != 1 || h[0].Rule != RuleRetention {
		t.Fatalf("history = %+v, want one retention row", h)
	}
	if l := h[0].Lost; len(l) != 2 || !isLoss(l[0], "late", 2, 4, 5, 0) || !isLoss(l[1], "offline", 6, 0, 5, 0) {
		t.Fatalf("lost = %+v, want late 2 (offsets 4..5) and offline 6 (0..5) (early had read everything)", l)
	}
}

func TestOnlyTheTimeRulesCanRecordALoss(t *testing.T) {
	t.Parallel()
	e := setup(t)
	insert := func(rule string) error {
		_, err := e.pool.Exec(e.ctx, `
			INSERT INTO lethe.retention_history (executed_at, queue_name, partition_name, partition_id, rule,
			                                     segments, frames, bytes, lost)
			VALUES ($1, 'q', 'p', gen_random_uuid(), $2, 1, 1, 1,
			        '[{"group": "g", "messages": 1, "fromOffset": 0, "toOffset": 0, "leased": 0}]')`, t0, rule)
		return err
	}
	for _, rule := range []string{RuleCompletedRetention, RulePartitionCleanup} {
		if err := insert(rule); err == nil || !strings.Contains(err.Error(), "retention_losses_only_time_rules_lose") {
			t.Fatalf("a %s row naming a loss: %v; want the check constraint to refuse it", rule, err)
		}
	}
	for _, rule := range []string{RuleRetention, RuleMaxWait} {
		if err := insert(rule); err != nil {
			t.Fatalf("a %s row naming a loss: %v", rule, err)
		}
	}
}

func TestACompletedStepThatWouldLoseDataFailsWhole(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.configure("q", map[string]any{"retentionEnabled": true, "completedRetentionSeconds": 60})
	e.pushSegment("q", "p", 2)
	e.consume("q", "p", "g", 1)
	e.clock.Advance(time.Hour)
	// Break the bound the way 010's was broken (it ignored some groups):
	// the step walks into data g has not read, and must refuse rather
	// than commit a loss under completed retention.
	if _, err := e.pool.Exec(e.ctx, `
		CREATE OR REPLACE FUNCTION lethe.completed_bound(p_partition uuid) RETURNS bigint
		LANGUAGE sql STABLE AS $$ SELECT 9223372036854775807::bigint $$`); err != nil {
		t.Fatal(err)
	}
	res, err := e.svc.RunCycle(e.ctx)
	if err != nil || len(res.Failures) != 1 || res.Failures[0].Phase != PhaseRetention {
		t.Fatalf("RunCycle = %v, failures %v; want the retention step on q/p to fail", err, res.Failures)
	}
	if !strings.Contains(res.Failures[0].Err.Error(), "retention_losses_only_time_rules_lose") {
		t.Fatalf("the step failed with %v, want the check constraint", res.Failures[0].Err)
	}
	if len(e.segments("q", "p")) != 1 || res.CompletedRetention.Segments != 0 {
		t.Fatalf("segments %v after the refused step; want the segment kept", e.segments("q", "p"))
	}
	if v := gather(t, e.svc, "lethe_retention_step_failures_total", map[string]string{"phase": PhaseRetention}); v != 1 {
		t.Fatalf("step failures counter = %v, want 1", v)
	}
}

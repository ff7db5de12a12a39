package streams_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/retention"
	"github.com/lethe-mq/lethe/internal/streams"
)

// count answers a count(*) query.
func count(t *testing.T, b *bundle, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := b.srv.Pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// cycle runs one retention cycle now and fails the test on a failed step.
func (b *bundle) cycle(t *testing.T) retention.CycleResult {
	t.Helper()
	res, err := b.srv.Retention.RunCycle(context.Background())
	if err != nil || len(res.Failures) > 0 {
		t.Fatalf("retention cycle: %v %v", err, res.Failures)
	}
	return res
}

// The state of a reset query is purged by the retention loop, in steps of
// at most RETENTION_BATCH_SIZE rows, each with its audit row, and the
// retired registration with its last step; the new registration's state
// stays.
func TestResetQueryStateIsPurgedInBoundedAuditedSteps(t *testing.T) {
	t.Parallel()
	b := setup(t, 2)
	old := registered(t, b, "q")
	p := partitionID(t, b, "src", "p1")
	writeState(t, b, old, p, map[string]string{"a": "1", "b": "2", "c": "3", "d": "4", "e": "5"})
	var reset api.StreamQueryResponse
	b.must(t, http.StatusOK, http.MethodPost, "/streams/v1/queries",
		api.StreamQueryRequest{Name: "q", SourceQueue: "src", ConfigHash: "h2", Reset: true}, &reset)
	writeState(t, b, reset.QueryID, p, map[string]string{"kept": "1"})
	if n := count(t, b, `SELECT count(*) FROM lethe.stream_state WHERE query_id = $1`, old); n != 5 {
		t.Fatalf("the reset deleted state in the request: %d rows left of 5; it must leave it to the loop", n)
	}

	res := b.cycle(t)
	if got := res.Reclaimed[streams.RuleRetired]; got != 5 {
		t.Fatalf("cycle reclaimed %v, want 5 rows of %s", res.Reclaimed, streams.RuleRetired)
	}
	if n := count(t, b, `SELECT count(*) FROM lethe.stream_queries WHERE id = $1`, old); n != 0 {
		t.Fatal("the retired registration was not deleted once its state was gone")
	}
	if got := stateOf(t, b, reset.QueryID, p); len(got) != 1 {
		t.Fatalf("the live registration's state is %v, want its one key", got)
	}
	// One audit row for the cycle's decision, its bounded steps folded in.
	auditRows := count(t, b, `SELECT count(*) FROM lethe.reclaim_history WHERE rule = $1`, streams.RuleRetired)
	steps := count(t, b, `SELECT sum(steps) FROM lethe.reclaim_history WHERE rule = $1`, streams.RuleRetired)
	total := count(t, b, `SELECT sum(rows) FROM lethe.reclaim_history WHERE rule = $1`, streams.RuleRetired)
	if auditRows != 1 || steps != 3 || total != 5 {
		t.Fatalf("audit: %d rows, %d steps, %d deleted; want one row of 3 steps (at most 2 each, the batch), 5 in all",
			auditRows, steps, total)
	}
	if res := b.cycle(t); len(res.Reclaimed) != 0 {
		t.Fatalf("a second cycle reclaimed %v; nothing was left", res.Reclaimed)
	}
}

// A removed query is refused at once and its state purged by the loop;
// removing needs a registered name.
func TestRemovedQueryStateIsPurged(t *testing.T) {
	t.Parallel()
	b := setup(t, 0)
	query := registered(t, b, "q")
	p := partitionID(t, b, "src", "p1")
	writeState(t, b, query, p, map[string]string{"a": "1", "b": "2"})
	var removed api.StreamQueryRemoved
	b.must(t, http.StatusOK, http.MethodDelete, "/streams/v1/queries/q", nil, &removed)
	if removed.QueryID != query || removed.StateKeys != 2 {
		t.Fatalf("remove answered %+v, want query_id %s and 2 state keys", removed, query)
	}
	b.must(t, http.StatusNotFound, http.MethodDelete, "/streams/v1/queries/q", nil, nil)
	b.must(t, http.StatusConflict, http.MethodPost, "/streams/v1/state/get",
		api.StreamStateRequest{QueryID: query, PartitionID: p}, nil)
	if res := b.cycle(t); res.Reclaimed[streams.RuleRetired] != 2 {
		t.Fatalf("cycle reclaimed %v, want the 2 keys", res.Reclaimed)
	}
	subject := ""
	_ = b.srv.Pool.QueryRow(context.Background(), `SELECT subject FROM lethe.reclaim_history WHERE rule = $1`, streams.RuleRetired).Scan(&subject)
	if !strings.Contains(subject, "q (removed") {
		t.Fatalf("audit subject %q does not name the query and why", subject)
	}
	// The name can be registered afresh.
	var again api.StreamQueryResponse
	b.must(t, http.StatusOK, http.MethodPost, "/streams/v1/queries",
		api.StreamQueryRequest{Name: "q", SourceQueue: "src", ConfigHash: "h"}, &again)
	if !again.Fresh {
		t.Fatalf("registering a removed name: %+v, want fresh", again)
	}
}

// A key no cycle wrote for STREAMS_STATE_IDLE_DAYS (30) is purged; a key
// written since, or only read, is not. Time is the injected clock.
func TestIdleStateKeysArePurgedOnTheInjectedClock(t *testing.T) {
	t.Parallel()
	b := setup(t, 0)
	query := registered(t, b, "q")
	p := partitionID(t, b, "src", "p1")
	writeState(t, b, query, p, map[string]string{"idle": "1", "busy": "1"})
	b.clk.Set(t0.AddDate(0, 0, 20))
	writeState(t, b, query, p, map[string]string{"busy": "2"})
	b.clk.Set(t0.AddDate(0, 0, 30))
	if res := b.cycle(t); len(res.Reclaimed) != 0 {
		t.Fatalf("at exactly 30 days the cycle reclaimed %v; a key is purged only when idle longer", res.Reclaimed)
	}
	b.clk.Set(t0.AddDate(0, 0, 30).Add(time.Second))
	_ = stateOf(t, b, query, p) // a read does not make a key busy
	res := b.cycle(t)
	if res.Reclaimed[streams.RuleIdleState] != 1 {
		t.Fatalf("cycle reclaimed %v, want the 1 idle key", res.Reclaimed)
	}
	if got := stateOf(t, b, query, p); len(got) != 1 || got["busy"] != "2" {
		t.Fatalf("state after the purge: %v, want only busy", got)
	}
	if n := count(t, b, `SELECT count(*) FROM lethe.reclaim_history WHERE rule = $1 AND rows = 1 AND subject LIKE 'q (query_id %'`, streams.RuleIdleState); n != 1 {
		t.Fatalf("%d audit rows name the idle purge of q, want 1", n)
	}
}

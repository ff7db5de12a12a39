package retention

import (
	"testing"
	"time"
)

// sidecarLeafAt names the sidecar leaf holding at, with its bounds.
func (e *env) sidecarLeafAt(at time.Time) (name string, lo, hi time.Time) {
	e.t.Helper()
	err := e.pool.QueryRow(e.ctx, `SELECT name, lo, hi FROM lethe.leaves WHERE parent = 'txns' AND lo <= $1 AND $1 < hi`, at).
		Scan(&name, &lo, &hi)
	if err != nil {
		e.t.Fatalf("the sidecar leaf holding %s: %v", at, err)
	}
	return name, lo, hi
}

// A sidecar leaf spans at most half the widest window (5 minutes for the
// 900 s default) and is dropped whole once all of it is older than the
// largest window of any queue (GREATEST(dedupWindowSeconds,
// completedRetentionSeconds, 900 s)), never a row earlier.
func TestSidecarLeavesDropWholePastEveryWindow(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.pushSegment("q", "p", 2)
	leaf, lo, hi := e.sidecarLeafAt(e.clock.Now())
	if span := hi.Sub(lo); span != 5*time.Minute {
		t.Fatalf("leaf %s spans %s; want 5m, half the 900 s window rounded down to a span", leaf, span)
	}

	e.clock.Set(hi.Add(899 * time.Second))
	if res := e.cycle(); res.TxnsPurged != 0 || !e.leafExists(leaf) {
		t.Fatalf("1 s before the leaf is 900 s old: purged %d hashes, leaf kept %v; want none purged", res.TxnsPurged, e.leafExists(leaf))
	}
	e.configure("slow", map[string]any{"dedupWindowSeconds": 2 * 86400})
	e.clock.Set(hi.Add(901 * time.Second))
	if res := e.cycle(); res.TxnsPurged != 0 || !e.leafExists(leaf) {
		t.Fatalf("another queue's 2-day window: purged %d hashes; want the leaf kept", res.TxnsPurged)
	}
	// The next leaves take the wider window's span (a day), clipped to
	// begin where the leaves made before end.
	e.clock.Advance(time.Hour)
	e.pushSegment("q", "p", 1)
	_, nlo, nhi := e.sidecarLeafAt(e.clock.Now())
	if nhi.Sub(nlo) > 24*time.Hour || nhi.Sub(nlo) <= 5*time.Minute {
		t.Fatalf("a leaf made under a 2-day window spans %s; want more than 5m, at most a day", nhi.Sub(nlo))
	}
	if n := e.count(`SELECT count(*) FROM lethe.leaves a JOIN lethe.leaves b ON a.name < b.name
	                 AND a.parent = 'txns' AND b.parent = 'txns' AND a.lo < b.hi AND b.lo < a.hi`); n != 0 {
		t.Fatalf("%d pairs of sidecar leaves overlap", n)
	}
	e.clock.Set(hi.Add(2*24*time.Hour + time.Second))
	if res := e.cycle(); res.TxnsPurged != 2 || e.leafExists(leaf) {
		t.Fatalf("past every window: purged %d hashes, leaf kept %v; want the leaf's 2 hashes dropped with it",
			res.TxnsPurged, e.leafExists(leaf))
	}
}

// Under a steady load the sidecar holds between one window and one window
// plus a leaf plus a cycle of hashes: it never grows past that, however
// long the load runs (leaves a day long grew for a whole day).
func TestSidecarStaysFlatUnderASteadyLoad(t *testing.T) {
	t.Parallel()
	e := setup(t)
	const every = 30 * time.Second
	lo, hi := int64(900/30), int64((900+300+30)/30)
	for i := 0; i < 240; i++ { // two hours
		e.pushSegment("q", "p", 1)
		e.cycle()
		held := e.count(`SELECT coalesce(sum(cardinality(hashes)), 0) FROM lethe.txns`)
		if held > hi+1 {
			t.Fatalf("after %s the sidecar holds %d hashes; want at most %d (900 s + a 5 min leaf + a cycle of pushes)",
				time.Duration(i)*every, held, hi+1)
		}
		if i > 60 && held < lo {
			t.Fatalf("after %s the sidecar holds %d hashes; want at least the 900 s window's %d", time.Duration(i)*every, held, lo)
		}
		if leaves := e.count(`SELECT count(*) FROM lethe.leaves WHERE parent = 'txns'`); leaves > 9 {
			t.Fatalf("after %s %d sidecar leaves exist; want the window's few and two ahead", time.Duration(i)*every, leaves)
		}
		e.clock.Advance(every)
	}
}

// At start the sidecar's leaves are made before any push needs one, as the
// tiers' are: a push never waits for its DDL.
func TestStartMakesTheSidecarLeavesAhead(t *testing.T) {
	t.Parallel()
	e := setup(t)
	if err := e.svc.EnsureLeaves(e.ctx); err != nil {
		t.Fatal(err)
	}
	_, _, hi := e.sidecarLeafAt(e.clock.Now())
	for range sidecarLeavesAhead {
		_, _, hi = e.sidecarLeafAt(hi)
	}
	if n := e.count(`SELECT count(*) FROM lethe.leaves WHERE parent = 'txns'`); n != sidecarLeavesAhead+1 {
		t.Fatalf("%d sidecar leaves at start; want the current one and %d ahead", n, sidecarLeavesAhead)
	}
}

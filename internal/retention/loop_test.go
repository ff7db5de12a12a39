package retention

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lethe-mq/lethe/client/api"
)

// lockHolders counts sessions of this database holding the retention lock.
func (e *env) lockHolders(lockID int64) int64 {
	e.t.Helper()
	return e.count(`
		SELECT count(*) FROM pg_catalog.pg_locks
		 WHERE locktype = 'advisory' AND granted AND classid = 0 AND objid = $1 AND objsubid = 1
		   AND database = (SELECT oid FROM pg_catalog.pg_database WHERE datname = current_database())`, lockID)
}

func TestOnlyOneReplicaSweepsACycle(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.configure("q", map[string]any{"retentionEnabled": true, "retentionSeconds": 60})
	for range 3 {
		e.pushSegment("q", "p", 2)
	}
	e.clock.Advance(time.Minute + time.Second)

	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	e.svc.cfg.TestSignals.Step = func(phase string, n int) error {
		once.Do(func() { close(entered); <-release })
		return nil
	}
	b := e.newService(newPool(t, e.dsn))
	c := e.newService(newPool(t, e.dsn))

	resA := make(chan CycleResult, 1)
	go func() {
		res, err := e.svc.RunCycle(e.ctx)
		if err != nil {
			t.Errorf("replica A: %v", err)
		}
		resA <- res
	}()
	<-entered
	for name, svc := range map[string]*Service{"B": b, "C": c} {
		res, err := svc.RunCycle(e.ctx)
		if err != nil || !res.Skipped {
			t.Fatalf("replica %s ran a cycle while A held the lock (skipped=%v, err=%v)", name, res.Skipped, err)
		}
	}
	close(release)
	if res := <-resA; res.Retention.Segments != 3 {
		t.Fatalf("A deleted %+v, want 3 segments", res.Retention)
	}
	res, err := b.RunCycle(e.ctx)
	if err != nil || res.Skipped || res.Total().Segments != 0 {
		t.Fatalf("B after A: %+v, %v; want a cycle that finds nothing left", res, err)
	}
	if v := gather(t, b, "lethe_retention_cycles_skipped_total", nil); v != 1 {
		t.Fatalf("B counted %v skipped cycles, want 1", v)
	}
}

func TestThreeLoopsOnOneDatabaseNeverDeleteTwice(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.configure("q", map[string]any{"retentionEnabled": true, "retentionSeconds": 60})
	const partitions, perPartition = 4, 10
	for p := range partitions {
		for range perPartition {
			e.pushSegment("q", string(rune('a'+p)), 1)
		}
	}
	e.clock.Advance(time.Minute + time.Second)

	var svcs []*Service
	for i := range 3 {
		pool := e.pool
		if i > 0 {
			pool = newPool(t, e.dsn)
		}
		svc := e.newService(pool, func(c *Config) { c.Interval = 10 * time.Millisecond; c.BatchSize = 3 })
		svc.cfg.TestSignals.Init()
		svcs = append(svcs, svc)
	}
	for _, svc := range svcs {
		if err := svc.Start(e.ctx); err != nil {
			t.Fatal(err)
		}
	}
	for e.count(`SELECT count(*) FROM lethe.segments`) > 0 {
		svcs[0].cfg.TestSignals.CycleDone.WaitOrTimeout(t)
	}
	for _, svc := range svcs {
		svc.Stop()
	}

	if n := e.count(`SELECT coalesce(sum(segments), 0) FROM lethe.retention_history`); n != partitions*perPartition {
		t.Fatalf("history records %d deleted segments, want %d", n, partitions*perPartition)
	}
	overlaps := e.count(`
		SELECT count(*) FROM lethe.retention_history a JOIN lethe.retention_history b
		  ON a.id < b.id AND a.partition_id = b.partition_id
		 AND int8range(a.from_offset, a.to_offset, '[]') && int8range(b.from_offset, b.to_offset, '[]')`)
	if overlaps != 0 {
		t.Fatalf("%d pairs of history rows cover the same offsets: something was deleted twice", overlaps)
	}
	total := 0.0
	for _, svc := range svcs {
		total += gather(t, svc, "lethe_retention_deleted_segments_total", map[string]string{"rule": "retention"})
	}
	if total != partitions*perPartition {
		t.Fatalf("the replicas' counters add up to %v deleted segments, want %d", total, partitions*perPartition)
	}
	// A session whose connection was closed mid-query (cancellation) ends
	// on the server a moment later; give it a bounded while.
	deadline := time.Now().Add(5 * time.Second)
	for e.lockHolders(LockIDDefault) != 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := e.lockHolders(LockIDDefault); n != 0 {
		t.Fatalf("%d sessions still hold the lock after the loops stopped", n)
	}
}

func TestLockIsReleasedAfterAnError(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.configure("q", map[string]any{"retentionEnabled": true, "retentionSeconds": 60})
	e.pushSegment("q", "p", 1)
	e.clock.Advance(2 * time.Minute)

	injected := errors.New("injected failure")
	e.svc.cfg.TestSignals.Step = func(phase string, n int) error {
		if n := e.lockHolders(LockIDDefault); n != 1 {
			t.Errorf("inside the cycle %d sessions hold the lock, want 1", n)
		}
		return injected
	}
	res, err := e.svc.RunCycle(e.ctx)
	if err != nil || !errors.Is(res.Err(), injected) {
		t.Fatalf("RunCycle = %v, failures %v; want the injected error recorded as a failed step", err, res.Err())
	}
	if n := e.lockHolders(LockIDDefault); n != 0 {
		t.Fatalf("after the error %d sessions hold the lock, want 0", n)
	}

	// A cancelled context on the way out too.
	ctx, cancel := context.WithCancel(e.ctx)
	e.svc.cfg.TestSignals.Step = func(string, int) error { cancel(); return nil }
	if _, err := e.svc.RunCycle(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("RunCycle = %v, want context.Canceled", err)
	}
	if n := e.lockHolders(LockIDDefault); n != 0 {
		t.Fatalf("after cancellation %d sessions hold the lock, want 0", n)
	}

	other := e.newService(newPool(t, e.dsn))
	res, err = other.RunCycle(e.ctx)
	if err != nil || res.Skipped || res.Retention.Segments != 1 {
		t.Fatalf("another replica after the failures: %+v, %v; want it to sweep the segment", res, err)
	}
	if !strings.Contains(e.logs.String(), "retention swept") {
		t.Fatal("no INFO line for the cycle that deleted")
	}
}

func TestAPushDuringALongSweepWaitsAtMostOneStep(t *testing.T) {
	t.Parallel()
	e := setup(t, func(c *Config) { c.BatchSize = 5 })
	e.configure("q", map[string]any{"retentionEnabled": true, "retentionSeconds": 60})
	const backlog = 60 // 12 steps of 5 segments
	for range backlog {
		e.pushSegment("q", "p", 1)
	}
	e.clock.Advance(time.Minute + time.Second)

	var pushed time.Duration
	stepsAfter := 0
	e.svc.cfg.TestSignals.Step = func(phase string, n int) error {
		switch {
		case phase == PhaseRetention && n == 6:
			// Mid-sweep: no step runs now, so the partition lock is free.
			ctx, cancel := context.WithTimeout(e.ctx, 5*time.Second)
			defer cancel()
			start := time.Now()
			_, err := e.eng.Push(ctx, []api.PushItem{{Queue: "q", Partition: "p", Payload: []byte(`"fresh"`)}}, "")
			pushed = time.Since(start)
			if err != nil {
				return err
			}
		case phase == PhaseRetention && n > 6:
			stepsAfter++
		}
		return nil
	}
	res := e.cycle()
	if res.Retention.Segments != backlog {
		t.Fatalf("deleted %d segments, want %d", res.Retention.Segments, backlog)
	}
	if stepsAfter < 5 {
		t.Fatalf("the sweep ran %d steps after the push; want the rest of the backlog (>= 5)", stepsAfter)
	}
	if got := e.segments("q", "p"); len(got) != 1 || got[0] != backlog {
		t.Fatalf("segments after the sweep %v, want the fresh one at offset %d", got, backlog)
	}
	t.Logf("push mid-sweep took %v", pushed)
}

func TestMetricsPurgeFailureDoesNotAbortTheCycle(t *testing.T) {
	t.Parallel()
	e := setup(t, func(c *Config) { c.MetricsRetentionDays = 1 })
	e.configure("q", map[string]any{"retentionEnabled": true, "retentionSeconds": 60})
	e.pushSegment("q", "p", 2)
	e.clock.Advance(2 * time.Minute)
	if _, err := e.pool.Exec(e.ctx, `
		INSERT INTO lethe.retention_history (executed_at, queue_name, partition_name, partition_id, rule, segments, frames, bytes)
		VALUES ($1, 'old', 'p', gen_random_uuid(), 'retention', 1, 1, 1)`, t0.Add(-48*time.Hour)); err != nil {
		t.Fatal(err)
	}
	// Break one purge target for real.
	if _, err := e.pool.Exec(e.ctx, `ALTER TABLE lethe.retention_runs RENAME TO retention_runs_gone`); err != nil {
		t.Fatal(err)
	}
	res, err := e.svc.RunCycle(e.ctx)
	if err != nil {
		t.Fatalf("RunCycle = %v; a metrics purge failure must not fail the cycle", err)
	}
	if res.MetricsPurgeErr == nil || !strings.Contains(res.MetricsPurgeErr.Error(), "retention_runs") {
		t.Fatalf("MetricsPurgeErr = %v, want the retention_runs failure", res.MetricsPurgeErr)
	}
	if res.Retention.Segments != 1 || len(e.segments("q", "p")) != 0 {
		t.Fatalf("deleted %+v; the segment delete must stand", res.Retention)
	}
	if n := e.count(`SELECT count(*) FROM lethe.retention_history WHERE queue_name = 'old'`); n != 0 {
		t.Fatal("the history purge did not run beside the failing one")
	}
	if !res.CleanupRan {
		t.Fatal("the phase after the purge did not run")
	}
	if !strings.Contains(e.logs.String(), "metrics purge failed") {
		t.Fatal("the purge failure was not logged")
	}
	if v := gather(t, e.svc, "lethe_retention_metrics_purge_failures_total", nil); v != 1 {
		t.Fatalf("purge failures counter = %v, want 1", v)
	}
}

func TestLogLineOnlyWhenSomethingWasDeleted(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.configure("q", map[string]any{"retentionEnabled": true, "retentionSeconds": 60})
	e.pushSegment("q", "p", 2)
	e.cycle()
	if strings.Contains(e.logs.String(), "level=INFO") || !strings.Contains(e.logs.String(), `level=DEBUG msg="retention idle"`) {
		t.Fatalf("an idle cycle logged:\n%s", e.logs.String())
	}
	e.clock.Advance(2 * time.Minute)
	e.cycle()
	line := regexp.MustCompile(`level=INFO msg="retention swept queues=1 segments_deleted=1 txns_purged=0 max_wait_evicted=0 partitions_deleted=0 metrics_purge=0 elapsed_ms=\d+"`)
	if !line.MatchString(e.logs.String()) {
		t.Fatalf("no swept line in:\n%s", e.logs.String())
	}
	if v := gather(t, e.svc, "lethe_retention_deleted_frames_total", map[string]string{"rule": "retention"}); v != 2 {
		t.Fatalf("deleted frames counter = %v, want 2", v)
	}
}

// gather reads one series from a fresh registry holding svc's metrics.
func gather(t *testing.T, svc *Service, name string, labels map[string]string) float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	if err := svc.Register(reg); err != nil {
		t.Fatal(err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	metric:
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if want, ok := labels[l.GetName()]; ok && want != l.GetValue() {
					continue metric
				}
			}
			switch {
			case m.GetCounter() != nil:
				return m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				return m.GetGauge().GetValue()
			}
		}
	}
	return 0
}

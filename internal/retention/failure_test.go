package retention

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"
)

// breakDeletesOf makes every delete of the partition's segments fail, as a
// damaged partition would.
func (e *env) breakDeletesOf(queue, partition string) {
	e.t.Helper()
	_, err := e.pool.Exec(e.ctx, `
		CREATE FUNCTION lethe.test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN RAISE EXCEPTION 'injected: segment of % cannot be deleted', OLD.partition_id; END $$`)
	if err != nil {
		e.t.Fatal(err)
	}
	// DDL takes no parameters; the id is a uuid read from the database.
	_, err = e.pool.Exec(e.ctx, `CREATE TRIGGER test_refuse BEFORE DELETE ON lethe.segments FOR EACH ROW
		WHEN (OLD.partition_id = '`+e.partitionID(queue, partition).String()+`') EXECUTE FUNCTION lethe.test_refuse()`)
	if err != nil {
		e.t.Fatal(err)
	}
}

func TestAFailingPartitionDoesNotStopTheCycle(t *testing.T) {
	t.Parallel()
	e := setup(t, func(c *Config) { c.MetricsRetentionDays = 1 })
	e.configure("q", map[string]any{"retentionEnabled": true, "retentionSeconds": 60})
	for _, p := range []string{"a", "b", "c"} {
		e.pushSegment("q", p, 2)
	}
	e.pushSegment("q", "empty", 1)
	e.clock.Advance(2 * time.Minute)
	e.cycle() // every partition is empty from here on
	e.clock.Advance(31 * day)
	for _, p := range []string{"a", "b", "c"} {
		e.pushSegment("q", p, 2) // "empty" stays idle
	}
	e.breakDeletesOf("q", "b")
	if _, err := e.pool.Exec(e.ctx, `
		INSERT INTO lethe.retention_history (executed_at, queue_name, partition_name, partition_id, rule, segments, frames, bytes)
		VALUES ($1, 'old', 'p', gen_random_uuid(), 'retention', 1, 1, 1)`, t0.Add(-48*time.Hour)); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(2 * time.Minute)

	res, err := e.svc.RunCycle(e.ctx)
	if err != nil {
		t.Fatalf("RunCycle = %v; one failing partition must not stop the cycle", err)
	}
	if len(res.Failures) != 1 || res.Failures[0].Partition != "b" || res.Failures[0].Phase != PhaseRetention {
		t.Fatalf("failures = %v, want the retention step of q/b", res.Failures)
	}
	if len(e.segments("q", "a")) != 0 || len(e.segments("q", "c")) != 0 || len(e.segments("q", "b")) != 1 {
		t.Fatalf("segments a %v, b %v, c %v; want a and c swept, b kept", e.segments("q", "a"), e.segments("q", "b"), e.segments("q", "c"))
	}
	if n := e.count(`SELECT count(*) FROM lethe.retention_history WHERE queue_name = 'old'`); n != 0 {
		t.Fatal("the metrics purge did not run after the failure")
	}
	if !res.CleanupRan || res.PartitionsDeleted != 1 {
		t.Fatalf("cleanup ran %v and deleted %d partitions; want it to run and delete the empty one", res.CleanupRan, res.PartitionsDeleted)
	}
	logs := e.logs.String()
	if !strings.Contains(logs, `msg="retention step failed; the cycle goes on" phase=retention queue=q partition=b`) ||
		!strings.Contains(logs, "injected: segment of") {
		t.Fatalf("the failure was not logged with its partition and error:\n%s", logs)
	}
	if v := gather(t, e.svc, "lethe_retention_step_failures_total", map[string]string{"phase": PhaseRetention}); v != 1 {
		t.Fatalf("step failures counter = %v, want 1", v)
	}
	if v := gather(t, e.svc, "lethe_retention_cycles_total", map[string]string{"outcome": "failed"}); v != 1 {
		t.Fatalf("failed cycles counter = %v, want 1", v)
	}
	if n := e.count(`SELECT count(*) FROM lethe.retention_runs WHERE error LIKE '%retention on q/b: %injected%'`); n != 1 {
		t.Fatalf("%d cycle records name the failed step, want 1", n)
	}
}

func TestTheLoopReopensItsConnectionAfterItBreaks(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.configure("q", map[string]any{"retentionEnabled": true, "retentionSeconds": 60})
	e.pushSegment("q", "p", 1)
	e.cycle() // opens the connection
	// kill ends the loop's connection and waits until its backend is gone:
	// pg_terminate_backend only signals it, and the backend holds the
	// loop's advisory lock until it exits (on a busy machine, after the
	// next cycle has tried for the lock).
	kill := func() {
		t.Helper()
		const loopSessions = `FROM pg_catalog.pg_stat_activity
			WHERE application_name = 'lethe retention' AND datname = current_database()`
		if n := e.count(`SELECT count(*) ` + loopSessions); n != 1 {
			t.Fatalf("%d retention sessions, want the loop's one connection", n)
		}
		pid := e.count(`SELECT pid ` + loopSessions)
		if n := e.count(`SELECT pg_catalog.pg_terminate_backend($1::int)::int`, pid); n != 1 {
			t.Fatalf("could not terminate the retention session %d", pid)
		}
		for deadline := time.Now().Add(30 * time.Second); ; {
			if e.count(`SELECT (SELECT count(*) FROM pg_catalog.pg_stat_activity WHERE pid = $1)
				+ (SELECT count(*) FROM pg_catalog.pg_locks WHERE pid = $1)`, pid) == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the terminated retention backend %d is still there after 30 s", pid)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}

	// Broken between cycles: the next cycle opens a new one and sweeps.
	kill()
	e.clock.Advance(2 * time.Minute)
	if res := e.cycle(); res.Retention.Segments != 1 {
		t.Fatalf("after the connection was killed: deleted %+v, want the segment", res.Retention)
	}

	// Broken mid-cycle: the cycle stops, the next one works.
	e.pushSegment("q", "p", 1)
	e.clock.Advance(2 * time.Minute)
	killed := false
	e.svc.cfg.TestSignals.Step = func(phase string, n int) error {
		if phase == PhaseRetention && !killed {
			killed = true
			kill()
		}
		return nil
	}
	res, err := e.svc.RunCycle(e.ctx)
	if err == nil || !strings.Contains(err.Error(), "connection lost") {
		t.Fatalf("RunCycle with its connection killed = %+v, %v; want it to stop: connection lost", res, err)
	}
	e.svc.cfg.TestSignals.Step = nil
	if res := e.cycle(); res.Retention.Segments != 1 {
		t.Fatalf("the cycle after: deleted %+v, want the segment", res.Retention)
	}
	if n := e.lockHolders(LockIDDefault); n != 0 {
		t.Fatalf("%d sessions hold the lock between cycles", n)
	}
}

func TestTheLoopNeverTakesAConnectionFromThePool(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.configure("q", map[string]any{"retentionEnabled": true, "retentionSeconds": 60})
	e.pushSegment("q", "p", 1)
	e.clock.Advance(2 * time.Minute)
	// Hold every pooled connection: the cycle still runs.
	var held []func()
	for range int(e.pool.Config().MaxConns) {
		c, err := e.pool.Acquire(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c.Release)
	}
	defer func() {
		for _, release := range held {
			release()
		}
	}()
	ctx, cancel := context.WithTimeout(e.ctx, 30*time.Second)
	defer cancel()
	res, err := e.svc.RunCycle(ctx)
	if err != nil || res.Retention.Segments != 1 {
		t.Fatalf("with the pool exhausted: %+v, %v; want the cycle to sweep on its own connection", res, err)
	}
}

func TestTheConnectionIsAskedForWithATimeout(t *testing.T) {
	t.Parallel()
	e := setup(t, func(c *Config) { c.ConnectTimeout = 100 * time.Millisecond })
	// A server that accepts connections and never answers.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	addr := ln.Addr().(*net.TCPAddr)
	e.svc.connConf.Host, e.svc.connConf.Port, e.svc.connConf.Fallbacks = "127.0.0.1", uint16(addr.Port), nil
	start := time.Now()
	_, err = e.svc.RunCycle(e.ctx)
	if err == nil || !strings.Contains(err.Error(), "open the loop's connection") {
		t.Fatalf("RunCycle against a server that never answers = %v; want the connection error", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("giving up took %v; want about the 100 ms timeout", took)
	}
}

package faults_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	pgrPushesPerPhase = 300
	pgrPhaseTimeout   = 30 * time.Second // for pgrPushesPerPhase acks, or for recovery
	pgrOutage         = 3 * time.Second  // how long PostgreSQL stays stopped
	pgrLeaseTime      = 2 * time.Second
	// pgrAckMargin: an ack answered this soon after a crash may have been
	// committed (asynchronously) before it, so it may be forgotten.
	pgrAckMargin = time.Second
)

// pgrTestRestartUnderLoad: producers and consumers run against one lethe
// process while its PostgreSQL is crashed and restarted (`pg_ctl restart
// -m immediate`), then crashed and left down for three seconds. lethe must
// recover by itself (same process), lose no acknowledged push, and answer
// every request during the outage with 503 or a success: never another
// 5xx, never a hang. Consumer acks commit asynchronously, so an ack from
// just before a crash may be forgotten and its message redelivered; that
// is counted, not failed.
func pgrTestRestartUnderLoad(t *testing.T, bin string) {
	cluster := pgrStartCluster(t)
	r := &pgrRun{t: t, lethe: procNewLethe(t, bin, cluster.ConnString("postgres")),
		tally: procNewTally("before"), ledger: procNewLedger()}
	pid := r.lethe.PID()
	// What a database error must not tell a client: the server's socket
	// folder, user and SQL state.
	r.tally.forbid(cluster.Dir(), "user=", "SQLSTATE")
	a := procNewAPI(r.lethe.URL, r.tally)
	procConfigure(t, a, "restarted", `{"leaseTime":2,"retryLimit":1000,"retryDelay":0}`)
	load := &procLoad{api: a, ledger: r.ledger, queue: "restarted", group: "readers",
		partitions: []string{"p0", "p1", "p2"}, batchSizes: []int{1, 20, 5, 80}}
	load.start(t, 3, 2)
	stopHealth := pgrPollHealth(a)
	_ = r.steady("steady") &&
		r.crash("restart", cluster.restartImmediate) &&
		r.steady("after restart") &&
		r.crash("stopped", func() error {
			if err := cluster.stopImmediate(); err != nil {
				return err
			}
			time.Sleep(pgrOutage) // the outage itself
			return cluster.startAgain()
		}) &&
		r.steady("after stop")
	load.stop()
	stopHealth()

	r.tally.setPhase("drain")
	drained := load.drain(pgrLeaseTime, procDrainTimeout)
	f := r.ledger.figures()
	t.Logf("PostgreSQL crashed twice under load (restart -m immediate; stop -m immediate, %v down, start): %s", pgrOutage, f)
	t.Logf("recovery: %s", strings.Join(r.recovery, "; "))
	t.Logf("responses by phase:\n%s", r.tally.report())
	if !drained {
		t.Errorf("drain did not settle within %v", procDrainTimeout)
	}
	if !r.lethe.running() || r.lethe.PID() != pid {
		t.Errorf("lethe did not survive the outage in the same process (running %v, pid %d, was %d)", r.lethe.running(), r.lethe.PID(), pid)
	}
	for _, p := range load.problemList() {
		t.Errorf("unexpected answer: %s", p)
	}
	procCheckFigures(t, f)
	for _, bad := range r.tally.unexpected(func(route, outcome string) bool { return procSuccess(outcome) || outcome == "503" }) {
		t.Errorf("answer other than a success or 503 (503 with Retry-After is the promise while the database is unreachable): %s", bad)
	}
	for _, body := range r.tally.errorBodies() {
		t.Errorf("error body is not {\"error\": ...} or tells the client about the database: %s", body)
	}
}

// pgrRun is the state of one PostgreSQL-restart scenario.
type pgrRun struct {
	t        *testing.T
	lethe    *procLethe
	tally    *procTally
	ledger   *procLedger
	recovery []string // per fault: how long pg_ctl took, then lethe
}

// steady waits until lethe has acknowledged pgrPushesPerPhase more pushes.
func (r *pgrRun) steady(name string) bool {
	base := r.ledger.ackedCount()
	if !r.waitAcked(base+pgrPushesPerPhase) || !r.lethe.running() {
		r.t.Errorf("%s: %d pushes acknowledged in %v, want %d (lethe running: %v)", name,
			r.ledger.ackedCount()-base, pgrPhaseTimeout, pgrPushesPerPhase, r.lethe.running())
		return false
	}
	return true
}

// crash runs fault (which returns once PostgreSQL is back) and waits until
// lethe acknowledges a push again. Requests starting meanwhile are tallied
// under name.
func (r *pgrRun) crash(name string, fault func() error) bool {
	r.tally.setPhase(name)
	began := time.Now()
	// PostgreSQL may be back, and lethe redelivering, before fault
	// returns (a restart takes pg_ctl half a second): an ack confirmed
	// before the crash may be forgotten from the moment it starts.
	r.ledger.forgiveAcksUntil(began.Add(pgrAckMargin))
	if err := fault(); err != nil {
		r.t.Errorf("%s: %v", name, err)
		return false
	}
	back := time.Now()
	r.ledger.forgiveAcksUntil(back.Add(pgrAckMargin))
	if !r.waitAcked(r.ledger.ackedCount()+1) || !r.lethe.running() {
		r.t.Errorf("%s: lethe did not acknowledge a push within %v of PostgreSQL's return (running: %v)",
			name, pgrPhaseTimeout, r.lethe.running())
		return false
	}
	r.recovery = append(r.recovery, fmt.Sprintf("%s: pg_ctl %v, then first acknowledged push %v later", name,
		back.Sub(began).Round(time.Millisecond), time.Since(back).Round(time.Millisecond)))
	r.tally.setPhase("after-" + name)
	return true
}

// waitAcked waits until n pushes are acknowledged, giving up early if
// lethe exits.
func (r *pgrRun) waitAcked(n int) bool {
	return procWaitFor(pgrPhaseTimeout, func() bool { return !r.lethe.running() || r.ledger.ackedCount() >= n }) &&
		r.ledger.ackedCount() >= n
}

// pgrPollHealth asks /health every 100ms until the returned stop is called,
// so the tally shows what it answered in each phase.
func pgrPollHealth(a *procAPI) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			a.health()
			select {
			case <-done:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

package faults_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/internal/pgtest"
)

// Scenario sizes: ten kills, each after at least procPushesPerLife
// acknowledged messages on the new process.
const (
	procKills          = 10
	procPushesPerLife  = 300
	procKillLeaseTime  = 2 * time.Second
	procLifeTimeout    = 30 * time.Second // for procPushesPerLife acks on one process
	procDrainTimeout   = time.Minute
	procKillRestartGap = 100 * time.Millisecond
)

// procTestLetheKilled: four producers push mixed batches to four partitions
// and two consumers pop and ack, while lethe is SIGKILLed ten times and
// restarted. Afterwards everything is read back: no acknowledged message
// lost, none delivered again once its ack was confirmed, none stored twice,
// and each producer's messages come out of a partition in the order it
// pushed them.
func procTestLetheKilled(t *testing.T, bin string) {
	lethe := procNewLethe(t, bin, pgtest.NewDatabase(t))
	tally := procNewTally("load")
	a := procNewAPI(lethe.URL, tally)
	procConfigure(t, a, "killed", `{"leaseTime":2,"retryLimit":1000,"retryDelay":0}`)
	ledger := procNewLedger()
	load := &procLoad{api: a, ledger: ledger, queue: "killed", group: "readers",
		partitions: []string{"p0", "p1", "p2", "p3"}, batchSizes: []int{1, 10, 3, 50, 7, 120}}
	load.start(t, 4, 2)

	jitter := []time.Duration{0, 37, 150, 5, 260, 90, 0, 210, 60, 120} // ms, so kills land at different points of a push
	for k := range procKills {
		base := ledger.ackedCount()
		if !procWaitFor(procLifeTimeout, func() bool { return ledger.ackedCount() >= base+procPushesPerLife }) {
			load.abort()
			t.Fatalf("kill %d: lethe (start %d) acknowledged %d pushes in %v, want %d", k+1, lethe.starts,
				ledger.ackedCount()-base, procLifeTimeout, procPushesPerLife)
		}
		time.Sleep(jitter[k%len(jitter)] * time.Millisecond)
		lethe.kill()
		time.Sleep(procKillRestartGap)
		lethe.start()
	}
	base := ledger.ackedCount()
	if !procWaitFor(procLifeTimeout, func() bool { return ledger.ackedCount() >= base+procPushesPerLife }) {
		t.Errorf("after the last restart lethe acknowledged only %d pushes in %v", ledger.ackedCount()-base, procLifeTimeout)
	}
	load.stop()

	tally.setPhase("drain")
	drained := load.drain(procKillLeaseTime, procDrainTimeout)
	f := ledger.figures()
	t.Logf("lethe SIGKILLed %d times under load: %s", procKills, f)
	t.Logf("responses:\n%s", tally.report())
	if !drained {
		t.Errorf("drain did not finish within %v", procDrainTimeout)
	}
	for _, p := range load.problemList() {
		t.Errorf("unexpected answer: %s", p)
	}
	procCheckFigures(t, f)
	// A killed process refuses or drops connections; a live one answers
	// 2xx (or 503), never another 5xx, and never hangs.
	for _, bad := range tally.unexpected(func(route, outcome string) bool {
		return procSuccess(outcome) || outcome == "503" || outcome == "refused" || outcome == "reset"
	}) {
		t.Errorf("unexpected outcome: %s", bad)
	}
	if rep := a.health(); rep.status != http.StatusOK {
		t.Errorf("health after the run: %d %v", rep.status, rep.err)
	}
}

package faults_test

import (
	"net/http"
	"testing"
)

// TestProcessFaults runs lethe's binary as a child process and breaks the
// processes around it: lethe SIGKILLed under load, consumers SIGKILLed
// holding a lease, PostgreSQL restarted under load. The scenarios share one
// build of ./cmd/lethe and run one after another (each is timing-bound on
// two cores).
func TestProcessFaults(t *testing.T) {
	bin := procBuildLethe(t)
	t.Run("LetheKilledUnderLoad", func(t *testing.T) { procTestLetheKilled(t, bin) })
	t.Run("ConsumerKilledMidLease", func(t *testing.T) { procTestConsumerKilled(t, bin) })
	t.Run("PostgresRestartedUnderLoad", func(t *testing.T) { pgrTestRestartUnderLoad(t, bin) })
}

// procConfigure sets queue options and fails the test unless lethe accepts them.
func procConfigure(t *testing.T, a *procAPI, queue, options string) {
	t.Helper()
	if rep := a.configure(queue, options); rep.err != nil || rep.status != http.StatusOK {
		t.Fatalf("configure %s %s: %d %v %s", queue, options, rep.status, rep.err, rep.body)
	}
}

// procCheckFigures fails t for every broken promise in f. Redelivery of a
// message whose ack was confirmed is a failure unless forgiven (acks a
// PostgreSQL crash may forget).
func procCheckFigures(t *testing.T, f procFigures) {
	t.Helper()
	if f.Acked == 0 {
		t.Fatal("no push was acknowledged: the scenario tested nothing")
	}
	if f.Lost > 0 {
		t.Errorf("%d acknowledged messages never delivered (first: %v)", f.Lost, f.FirstLost)
	}
	for name, n := range map[string]int{
		"delivered again after a confirmed ack": f.AfterAck,
		"first delivered out of producer order": f.OutOfOrder,
		"stored twice under one transactionId":  f.StoredTwice,
		"delivered though never sent":           f.Unknown,
		"delivered with a corrupted payload":    f.Corrupt,
	} {
		if n > 0 {
			t.Errorf("%d messages %s", n, name)
		}
	}
	if t.Failed() {
		for _, v := range f.Violations {
			t.Logf("  %s", v)
		}
	}
}

// procSuccess reports whether an outcome is a 2xx status.
func procSuccess(outcome string) bool {
	return len(outcome) == 3 && outcome[0] == '2'
}

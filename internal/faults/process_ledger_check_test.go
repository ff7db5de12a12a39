package faults_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/client/api"
)

// The process scenarios pass only if the ledger sees what they check for;
// this feeds it each kind of broken promise and expects it counted.
func TestProcessLedgerCatchesEveryBrokenPromise(t *testing.T) {
	t.Parallel()
	msg := func(p procPayload, offset int) api.Message {
		data, _ := json.Marshal(p)
		return api.Message{TransactionID: p.txnID(), Data: data, Partition: p.Partition, ID: fmt.Sprintf("id-%d", offset)}
	}
	sent := []procPayload{procNewPayload(1, 0, "a"), procNewPayload(1, 1, "a"), procNewPayload(1, 2, "a"), procNewPayload(1, 3, "a")}
	l := procNewLedger()
	l.attempt(sent)
	l.acknowledge(sent)
	crashed := time.Now()

	l.deliver([]api.Message{msg(sent[0], 0), msg(sent[2], 2)})
	l.confirm([]api.AckResult{{TransactionID: sent[0].txnID(), Success: true}}, crashed.Add(-time.Second))
	l.confirm([]api.AckResult{{TransactionID: sent[2].txnID(), Success: true}}, crashed.Add(time.Second))
	l.forgiveAcksUntil(crashed)
	corrupt := msg(sent[3], 3)
	corrupt.Data = json.RawMessage(`{"producer":1,"seq":3,"partition":"a","pad":"x"}`)
	l.deliver([]api.Message{
		msg(sent[1], 1),                    // after seq 2: out of order
		msg(sent[0], 0),                    // acked before the crash: forgiven
		msg(sent[2], 2),                    // acked after the crash: a violation
		msg(sent[2], 9),                    // same transaction id at another offset
		corrupt,                            // payload changed
		msg(procNewPayload(7, 0, "a"), 10), // never sent
	})

	f := l.figures()
	want := procFigures{Lost: 1, OutOfOrder: 1, AfterAckForgiven: 1, AfterAck: 2, StoredTwice: 1, Corrupt: 1, Unknown: 1}
	got := procFigures{Lost: f.Lost, OutOfOrder: f.OutOfOrder, AfterAckForgiven: f.AfterAckForgiven, AfterAck: f.AfterAck,
		StoredTwice: f.StoredTwice, Corrupt: f.Corrupt, Unknown: f.Unknown}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("ledger counted\n %+v\nwant\n %+v\nviolations: %q", got, want, f.Violations)
	}
	if len(f.FirstLost) != 1 || f.FirstLost[0] != sent[3].txnID() {
		t.Errorf("lost = %v, want [%s] (its only delivery was corrupt)", f.FirstLost, sent[3].txnID())
	}
}

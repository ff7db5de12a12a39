package engine_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/google/uuid"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/engine"
	"github.com/lethe-mq/lethe/internal/store"
)

// An item pushed without a transactionId is named by where it is stored:
// the push answers a UUIDv8 that the pop, an ack in and outside the lease,
// the message lookup and a trace all know, and the sidecar holds nothing
// for it (only the producer's id pushed beside it).
func TestCoreMintedIDNamesTheMessage(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	pushed := e.pushItems(
		api.PushItem{Queue: "q", Partition: "p", Payload: json.RawMessage(`0`)},
		api.PushItem{Queue: "q", Partition: "p", Payload: json.RawMessage(`1`), TransactionID: "own"},
		api.PushItem{Queue: "q", Partition: "p", Payload: json.RawMessage(`2`)},
	)
	pid := uuid.MustParse(pushed[0].PartitionID)
	for _, i := range []int{0, 2} {
		if want := store.MintedID(pid, int64(i)); pushed[i].TransactionID != want || pushed[i].TransactionIDCamel != want {
			t.Errorf("item %d answered transaction id %q/%q, want %s", i, pushed[i].TransactionID, pushed[i].TransactionIDCamel, want)
		}
	}
	if hashes := e.count(`SELECT coalesce(sum(cardinality(hashes)), 0) FROM lethe.txns`); hashes != 1 {
		t.Errorf("the sidecar holds %d hashes, want 1: the producer's id only", hashes)
	}
	resp := e.popN(engine.PopRequest{Queue: "q", Partition: "p", Batch: 10}, 3)
	for i, m := range resp.Messages {
		if m.TransactionID != pushed[i].TransactionID {
			t.Errorf("pop gave message %d transaction id %q, the push answered %q", i, m.TransactionID, pushed[i].TransactionID)
		}
	}
	for _, m := range resp.Messages {
		e.ackMsg(m, api.AckCompleted)
	}
	// The lease is settled: the ack resolves the id itself.
	again := e.ack(api.AckRequest{TransactionID: pushed[2].TransactionID, PartitionID: pushed[2].PartitionID, Status: api.AckCompleted})
	if !again[0].Success {
		t.Errorf("a repeated ack of a minted id outside its lease = %+v, want success (already done)", again[0])
	}
	m, err := readerOf(e.eng).GetMessage(e.ctx, pushed[2].PartitionID, pushed[2].TransactionID)
	if err != nil || string(m.Payload) != `2` || m.TransactionID != pushed[2].TransactionID {
		t.Errorf("GetMessage of a minted id = %+v, %v; want payload 2 under the same id", m, err)
	}
	if _, err := readerOf(e.eng).GetMessage(e.ctx, pushed[2].PartitionID, store.MintedID(pid, 3)); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("GetMessage of an offset not given = %v, want not found", err)
	}
}

// A minted id pushed again is what the dedup promise says of any id: a
// duplicate of its message in its own partition, an ordinary id in any
// other. One naming an offset the partition has not given is refused
// before anything of the request is written, on every push path.
func TestCoreRepushOfAMintedID(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	first := e.push("q", "p", `"first"`)[0]
	pid := uuid.MustParse(first.PartitionID)
	got := e.pushItems(
		api.PushItem{Queue: "q", Partition: "p", Payload: json.RawMessage(`"again"`), TransactionID: first.TransactionID},
		api.PushItem{Queue: "q", Partition: "elsewhere", Payload: json.RawMessage(`"forwarded"`), TransactionID: first.TransactionID},
		api.PushItem{Queue: "q", Partition: "p", Payload: json.RawMessage(`"second"`)},
	)
	if got[0].Status != api.StatusDuplicate || got[0].MessageID != first.MessageID || got[0].PartitionID != first.PartitionID {
		t.Errorf("the minted id again in its partition = %+v, want a duplicate of %s", got[0], first.MessageID)
	}
	if got[1].Status != api.StatusQueued || got[1].TransactionID != first.TransactionID {
		t.Errorf("the minted id in another partition = %+v, want queued under that id", got[1])
	}
	if want := store.MintedID(pid, 1); got[2].Status != api.StatusQueued || got[2].TransactionID != want {
		t.Errorf("the next minted item = %+v, want queued as %s", got[2], want)
	}
	// The forwarded copy is a producer's id in its partition: found there.
	if again := e.pushItems(api.PushItem{Queue: "q", Partition: "elsewhere", Payload: json.RawMessage(`0`), TransactionID: first.TransactionID}); again[0].Status != api.StatusDuplicate {
		t.Errorf("the forwarded id again = %+v, want a duplicate", again[0])
	}

	// A producer's own UUIDv8 (the form, for no partition here) is an
	// ordinary id: stored, then found as any producer id is.
	own := store.MintedID(uuid.New(), 5)
	for i, want := range []string{api.StatusQueued, api.StatusDuplicate} {
		if r := e.pushItems(api.PushItem{Queue: "q", Partition: "p", Payload: json.RawMessage(`"own"`), TransactionID: own}); r[0].Status != want {
			t.Errorf("a producer's UUIDv8, push %d = %+v, want %s", i, r[0], want)
		}
	}

	before := e.rowCounts()
	forged := store.MintedID(pid, 3)
	_, err := e.eng.Push(e.ctx, []api.PushItem{
		{Queue: "q", Partition: "p", Payload: json.RawMessage(`"fine"`)},
		{Queue: "q", Partition: "p", Payload: json.RawMessage(`"forged"`), TransactionID: forged},
	}, "")
	if !errors.Is(err, engine.ErrInvalid) {
		t.Errorf("push of a minted id for an offset not given = %v, want invalid", err)
	}
	coreSameCounts(t, before, e.rowCounts())

	// A transaction's push: the same answers.
	tx, err := e.eng.Transaction(e.ctx, api.TransactionRequest{Operations: []api.Operation{
		{Type: "push", Items: []api.PushItem{{Queue: "q", Partition: "p", Payload: json.RawMessage(`0`), TransactionID: first.TransactionID}}},
	}}, "")
	var results []api.PushResult
	if err == nil && tx.Success {
		err = json.Unmarshal(tx.Results[0], &results)
	}
	if err != nil || len(results) != 1 || results[0].Status != api.StatusDuplicate || results[0].MessageID != first.MessageID {
		t.Errorf("a transaction pushing the minted id again = %+v, %v; want a duplicate of %s", results, err, first.MessageID)
	}
	_, err = e.eng.Transaction(e.ctx, api.TransactionRequest{Operations: []api.Operation{
		{Type: "push", Items: []api.PushItem{{Queue: "q", Partition: "p", Payload: json.RawMessage(`0`), TransactionID: forged}}},
	}}, "")
	if !errors.Is(err, engine.ErrInvalid) {
		t.Errorf("a transaction pushing a forged minted id = %v, want invalid", err)
	}
	coreSameCounts(t, before, e.rowCounts())
	resp := e.popN(engine.PopRequest{Queue: "q", Partition: "p", Batch: 10}, 3)
	if got := fmt.Sprint(corePayloads(resp)); got != `["first" "second" "own"]` {
		t.Errorf("partition p holds %s, want first, second and own only", got)
	}
}

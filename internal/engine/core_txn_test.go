package engine_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/engine"
)

func TestCoreTransactionAckAndPushCommitTogether(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	e.push("in", "", `"job"`)
	m := e.popN(engine.PopRequest{Queue: "in", Group: "workers"}, 1).Messages[0]
	resp, err := e.eng.Transaction(e.ctx, api.TransactionRequest{Operations: []api.Operation{
		{Type: "ack", TransactionID: m.TransactionID, PartitionID: m.PartitionID, LeaseID: m.LeaseID, Status: "completed", ConsumerGroup: "workers"},
		{Type: "push", Items: []api.PushItem{{Queue: "out", Payload: json.RawMessage(`"result"`), TransactionID: "out-1"}}},
	}}, "")
	if err != nil || !resp.Success {
		t.Fatalf("transaction = %+v, %v", resp, err)
	}
	if len(resp.Results) != 2 {
		t.Fatalf("results %s, want one per operation", resp.Results)
	}
	var ackRes api.AckResult
	var pushRes []api.PushResult
	if err := json.Unmarshal(resp.Results[0], &ackRes); err != nil || !ackRes.Success {
		t.Errorf("ack result %s (%v)", resp.Results[0], err)
	}
	if err := json.Unmarshal(resp.Results[1], &pushRes); err != nil || len(pushRes) != 1 || pushRes[0].Status != api.StatusQueued {
		t.Errorf("push result %s (%v)", resp.Results[1], err)
	}
	if again := e.pop(engine.PopRequest{Queue: "in", Group: "workers"}); len(again.Messages) != 0 {
		t.Errorf("acked in the transaction, yet redelivered: %v", corePayloads(again))
	}
	out := e.popN(engine.PopRequest{Queue: "out"}, 1)
	if out.Messages[0].ID != pushRes[0].MessageID || string(out.Messages[0].Data) != `"result"` {
		t.Errorf("pushed in the transaction: got %+v", out.Messages[0])
	}
}

func TestCoreTransactionFailedAckRollsBackPush(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	e.push("in", "", `"job"`)
	m := e.popN(engine.PopRequest{Queue: "in", Group: "workers"}, 1).Messages[0]
	e.push("out", "", `"existing"`) // so "out" and its partition exist
	before := e.rowCounts()
	resp, err := e.eng.Transaction(e.ctx, api.TransactionRequest{Operations: []api.Operation{
		{Type: "push", Items: []api.PushItem{{Queue: "out", Payload: json.RawMessage(`"must not appear"`)}}},
		{Type: "ack", TransactionID: m.TransactionID, PartitionID: m.PartitionID, Status: "completed", ConsumerGroup: "workers"},
		{Type: "ack", TransactionID: "unknown-txn", PartitionID: m.PartitionID, Status: "completed", ConsumerGroup: "workers"},
	}}, "")
	if err != nil {
		t.Fatalf("transaction with a bad ack: error %v, want success:false", err)
	}
	if resp.Success || !strings.Contains(resp.Error, "operations[2]") {
		t.Errorf("transaction = %+v, want success false naming operations[2]", resp)
	}
	coreSameCounts(t, before, e.rowCounts())
	if out := e.popN(engine.PopRequest{Queue: "out", Batch: 10}, 1); corePayloads(out)[0] != `"existing"` {
		t.Errorf("out holds %v", corePayloads(out))
	}
	// The good ack rolled back too: the lease still holds the message.
	if n := e.count(`SELECT count(*) FROM lethe.cursors WHERE group_name = 'workers' AND lease_id IS NOT NULL AND committed = -1`); n != 1 {
		t.Errorf("the rolled-back ack changed the cursor")
	}
	e.ackMsg(m, api.AckCompleted)
}

func TestCoreTransactionRejectsMalformed(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	cases := map[string][]api.Operation{
		"no operations":      nil,
		"unknown type":       {{Type: "delete"}},
		"empty type":         {{}},
		"ack bad partition":  {{Type: "ack", TransactionID: "t", PartitionID: "zz"}},
		"ack no transaction": {{Type: "ack", PartitionID: uuid.NewString()}},
		"push item no queue": {{Type: "push", Items: []api.PushItem{{Payload: json.RawMessage(`1`)}}}},
		"good then bad":      {{Type: "push", Items: []api.PushItem{{Queue: "q"}}}, {Type: "nope"}},
	}
	for name, ops := range cases {
		_, err := e.eng.Transaction(e.ctx, api.TransactionRequest{Operations: ops}, "")
		if !errors.Is(err, engine.ErrInvalid) {
			t.Errorf("%s: err %v, want ErrInvalid", name, err)
		}
	}
	if st, _ := e.stored(); st.Segments != 0 {
		t.Errorf("%d segments written by rejected transactions", st.Segments)
	}
}

// A transaction rejected as malformed (400) must not have created the
// queues and partitions of the push operations before the bad one.
func TestCoreTransactionRejectedCreatesNothing(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	_, err := e.eng.Transaction(e.ctx, api.TransactionRequest{Operations: []api.Operation{
		{Type: "push", Items: []api.PushItem{{Queue: "created-by-a-400"}}},
		{Type: "nope"},
	}}, "")
	if !errors.Is(err, engine.ErrInvalid) {
		t.Fatalf("err %v, want ErrInvalid", err)
	}
	coreSameCounts(t, map[string]int64{"queues": 0, "partitions": 0}, e.rowCounts())
}

// A transaction that fails while it runs (a step fails, so it rolls back)
// leaves nothing behind either: not the queues and partitions its pushes
// created, nor their cached ids; the same pushes in a later transaction
// work.
func TestCoreTransactionFailedCreatesNoCatalogRows(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	e.push("in", "", `"job"`)
	m := e.popN(engine.PopRequest{Queue: "in", Group: "w"}, 1).Messages[0]
	before := e.rowCounts()
	ops := []api.Operation{
		{Type: "push", Items: []api.PushItem{{Queue: "new-queue", Partition: "p1", Payload: json.RawMessage(`1`)},
			{Queue: "in", Partition: "new-partition", Payload: json.RawMessage(`2`)}}},
		{Type: "ack", TransactionID: "unknown", PartitionID: m.PartitionID, Status: "completed", ConsumerGroup: "w"},
	}
	resp, err := e.eng.Transaction(e.ctx, api.TransactionRequest{Operations: ops}, "")
	if err != nil || resp.Success {
		t.Fatalf("transaction = %+v, %v; want success false", resp, err)
	}
	coreSameCounts(t, before, e.rowCounts())
	ops[1] = api.Operation{Type: "ack", TransactionID: m.TransactionID, PartitionID: m.PartitionID, Status: "completed", ConsumerGroup: "w"}
	if resp, err := e.eng.Transaction(e.ctx, api.TransactionRequest{Operations: ops}, ""); err != nil || !resp.Success {
		t.Fatalf("the same transaction with a good ack = %+v, %v", resp, err)
	}
	if n := e.count(`SELECT count(*) FROM lethe.partitions`); n != before["partitions"]+2 {
		t.Errorf("%d partitions after the committed transaction, want %d", n, before["partitions"]+2)
	}
	e.popN(engine.PopRequest{Queue: "new-queue", Partition: "p1"}, 1)
	e.popN(engine.PopRequest{Queue: "in", Partition: "new-partition"}, 1)
}

// A transactional push whose queue was deleted behind the catalog's back
// (another replica deleted it) aborts whole with a message to retry, even
// when its other partitions' appends travel in the same pipelined batch;
// the retry creates the queue again and succeeds.
func TestCoreTransactionPushToDeletedQueueAbortsWhole(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	e.push("keep", "a", `1`)
	e.push("gone", "b", `1`)
	e.push("keep", "c", `1`)
	for _, sql := range []string{
		`DELETE FROM lethe.segments s USING lethe.partitions p JOIN lethe.queues q ON q.id = p.queue_id WHERE s.partition_id = p.id AND q.name = 'gone'`,
		`DELETE FROM lethe.txns t USING lethe.partitions p JOIN lethe.queues q ON q.id = p.queue_id WHERE t.partition_id = p.id AND q.name = 'gone'`,
		`DELETE FROM lethe.partitions p USING lethe.queues q WHERE q.id = p.queue_id AND q.name = 'gone'`,
		`DELETE FROM lethe.queues WHERE name = 'gone'`,
	} {
		if _, err := e.pool.Exec(e.ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	before := e.rowCounts()
	req := api.TransactionRequest{Operations: []api.Operation{{Type: "push", Items: []api.PushItem{
		{Queue: "keep", Partition: "a", Payload: json.RawMessage(`2`)},
		{Queue: "gone", Partition: "b", Payload: json.RawMessage(`2`)},
		{Queue: "keep", Partition: "c", Payload: json.RawMessage(`2`)},
	}}}}
	resp, err := e.eng.Transaction(e.ctx, req, "")
	if err != nil || resp.Success || !strings.Contains(resp.Error, "queue gone was deleted meanwhile; retry") {
		t.Fatalf("transaction into a deleted queue = %+v, %v; want success:false asking to retry", resp, err)
	}
	if after := e.rowCounts(); after["stored messages"] != before["stored messages"] {
		t.Errorf("the aborted transaction stored %d messages", after["stored messages"]-before["stored messages"])
	}
	if resp, err = e.eng.Transaction(e.ctx, req, ""); err != nil || !resp.Success {
		t.Fatalf("the retry = %+v, %v; want success", resp, err)
	}
	if after := e.rowCounts(); after["stored messages"] != before["stored messages"]+3 {
		t.Errorf("the retry stored %d messages, want 3", after["stored messages"]-before["stored messages"])
	}
}

// A transaction's pushes lock their partitions' rows in partition id order,
// the order commit groups lock them in, whatever order the request names
// them in, so the two cannot deadlock on each other. The test holds the
// row of the partition with the larger id, lets the transaction push to
// it first in request order, and waits until the transaction is blocked:
// by then it must already hold the smaller one's row.
func TestCoreTransactionLocksPartitionsInIDOrder(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	e.push("order", "x", `1`)
	e.push("order", "y", `1`)
	var small, large string
	if err := e.pool.QueryRow(e.ctx, `
		SELECT min(p.id::text), max(p.id::text) FROM lethe.partitions p JOIN lethe.queues q ON q.id = p.queue_id
		 WHERE q.name = 'order'`).Scan(&small, &large); err != nil {
		t.Fatal(err)
	}
	var largeName string
	if err := e.pool.QueryRow(e.ctx, `SELECT name FROM lethe.partitions WHERE id = $1`, large).Scan(&largeName); err != nil {
		t.Fatal(err)
	}
	smallName := map[string]string{"x": "y", "y": "x"}[largeName]

	holder, err := e.pool.Begin(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback(e.ctx)
	if _, err := holder.Exec(e.ctx, `SELECT 1 FROM lethe.partitions WHERE id = $1 FOR UPDATE`, large); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		req := api.TransactionRequest{Operations: []api.Operation{{Type: "push", Items: []api.PushItem{
			{Queue: "order", Partition: largeName, Payload: json.RawMessage(`2`)},
			{Queue: "order", Partition: smallName, Payload: json.RawMessage(`2`)},
		}}}}
		resp, err := e.eng.Transaction(e.ctx, req, "")
		if err == nil && !resp.Success {
			err = fmt.Errorf("transaction answered %+v", resp)
		}
		done <- err
	}()
	// Wait until the transaction waits for the held row.
	deadline := time.Now().Add(20 * time.Second)
	for {
		var waiting int
		if err := e.pool.QueryRow(e.ctx, `
			SELECT count(*) FROM pg_stat_activity
			 WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the transaction never waited for the held partition row")
		}
		time.Sleep(10 * time.Millisecond)
	}
	_, err = holder.Exec(e.ctx, `SELECT 1 FROM lethe.partitions WHERE id = $1 FOR UPDATE NOWAIT`, small)
	if err == nil {
		t.Error("the partition with the smaller id was not locked yet: the transaction locks in request order, not id order")
	}
	_ = holder.Rollback(e.ctx)
	if err := <-done; err != nil {
		t.Fatalf("the transaction: %v", err)
	}
}

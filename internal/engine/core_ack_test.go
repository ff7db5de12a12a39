package engine_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/engine"
)

func TestCoreAckCompletedIsNotRedelivered(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	e.configure("done", `{"leaseTime": 5}`)
	e.push("done", "", `1`, `2`)
	resp := e.popN(engine.PopRequest{Queue: "done", Group: "g", Batch: 10}, 2)
	for _, st := range []string{api.AckCompleted, api.AckSuccess} { // "success" is Queen's alias
		m := resp.Messages[0]
		if st == api.AckSuccess {
			m = resp.Messages[1]
		}
		r := e.ackMsg(m, st)
		if r.QueueName != "done" || r.PartitionName != "Default" {
			t.Errorf("ack result %+v, want queue and partition names", r)
		}
	}
	e.clock.Advance(time.Minute) // past the lease: nothing comes back
	if again := e.pop(engine.PopRequest{Queue: "done", Group: "g", Batch: 10}); len(again.Messages) != 0 {
		t.Errorf("acked messages redelivered: %v", corePayloads(again))
	}
	if n := e.count(`SELECT committed FROM lethe.cursors WHERE group_name = 'g'`); n != 1 {
		t.Errorf("committed = %d, want 1", n)
	}
	// Acking again is harmless and answers success.
	res := e.ack(api.AckRequest{TransactionID: resp.Messages[0].TransactionID, PartitionID: resp.PartitionID, ConsumerGroup: "g"})
	if !res[0].Success {
		t.Errorf("repeated ack of a done message = %+v, want success", res[0])
	}
}

func TestCoreAckFailedRetriesThenDeadLetters(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	e.configure("retry", `{"retryLimit": 2}`)
	e.push("retry", "", `{"n":"poison"}`, `{"n":"next"}`)
	var last api.AckResult
	for attempt := range 3 {
		resp := e.popN(engine.PopRequest{Queue: "retry", Group: "g"}, 1)
		m := resp.Messages[0]
		if string(m.Data) != `{"n":"poison"}` || m.RetryCount != attempt {
			t.Fatalf("delivery %d = %s retryCount %d, want the poison message with retryCount %d", attempt, m.Data, m.RetryCount, attempt)
		}
		if n := e.count(`SELECT count(*) FROM lethe.dead_letters`); n != 0 {
			t.Fatalf("dead letter written after %d failures, before the limit", attempt)
		}
		last = e.ackMsg(m, api.AckFailed)
		if !last.LeaseReleased {
			t.Errorf("failed ack of the whole lease: leaseReleased false")
		}
		e.clock.Advance(time.Second) // the default retryDelay
	}
	if !last.DLQ {
		t.Errorf("third failure with retryLimit 2: result %+v, want dlq true", last)
	}
	var (
		offset  int64
		txnID   string
		payload string
		errText string
		retries int
		group   string
	)
	err := e.pool.QueryRow(e.ctx, `SELECT msg_offset, txn_id, payload::text, error, retry_count, group_name FROM lethe.dead_letters`).
		Scan(&offset, &txnID, &payload, &errText, &retries, &group)
	if err != nil {
		t.Fatalf("dead letter row: %v", err)
	}
	if offset != 0 || txnID == "" || payload != `{"n": "poison"}` || errText != "test says failed" || retries != 3 || group != "g" {
		t.Errorf("dead letter = offset %d txn %q payload %s error %q retries %d group %q", offset, txnID, payload, errText, retries, group)
	}
	// The group moved on.
	next := e.popN(engine.PopRequest{Queue: "retry", Group: "g"}, 1)
	if string(next.Messages[0].Data) != `{"n":"next"}` || next.Messages[0].RetryCount != 0 {
		t.Errorf("after the dead letter got %s retry %d, want the next message fresh", next.Messages[0].Data, next.Messages[0].RetryCount)
	}
	// Another group is unaffected and still gets the poison message.
	other := e.popN(engine.PopRequest{Queue: "retry", Group: "other"}, 1)
	if string(other.Messages[0].Data) != `{"n":"poison"}` {
		t.Errorf("other group got %s", other.Messages[0].Data)
	}
}

func TestCoreAckRetryAliasAndRetryLimitZero(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	e.configure("zero", `{"retryLimit": 0}`)
	e.push("zero", "", `1`, `2`)
	m := e.popN(engine.PopRequest{Queue: "zero"}, 1).Messages[0]
	if r := e.ackMsg(m, api.AckRetry); !r.DLQ {
		t.Errorf("retry with retryLimit 0 = %+v, want straight to the dead letters", r)
	}
	if n := e.count(`SELECT count(*) FROM lethe.dead_letters WHERE group_name = $1`, api.QueueModeGroup); n != 1 {
		t.Errorf("%d dead letters for queue mode, want 1", n)
	}
	e.popN(engine.PopRequest{Queue: "zero"}, 1)
}

func TestCoreAckFailedWaitsRetryDelay(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	e.configure("delay", `{"retryDelay": 5000}`)
	e.push("delay", "", `1`)
	m := e.popN(engine.PopRequest{Queue: "delay", Group: "g"}, 1).Messages[0]
	e.ackMsg(m, api.AckFailed)
	e.clock.Advance(4 * time.Second)
	for _, p := range []string{"", "Default"} {
		if resp := e.pop(engine.PopRequest{Queue: "delay", Group: "g", Partition: p}); len(resp.Messages) != 0 {
			t.Fatalf("redelivered (partition %q) 4 s after failing with retryDelay 5 s", p)
		}
	}
	e.clock.Advance(2 * time.Second)
	again := e.popN(engine.PopRequest{Queue: "delay", Group: "g"}, 1)
	if again.Messages[0].ID != m.ID || again.Messages[0].RetryCount != 1 {
		t.Errorf("redelivery = %+v", again.Messages[0])
	}
}

func TestCoreAckDLQIsImmediate(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	e.push("dlq", "", `"bad"`, `"good"`, `"after"`)
	resp := e.popN(engine.PopRequest{Queue: "dlq", Group: "g", Batch: 2}, 2)
	r := e.ackMsg(resp.Messages[0], api.AckDLQ)
	if !r.DLQ || r.LeaseReleased {
		t.Errorf("dlq ack of 1 of 2 = %+v, want dlq true and the lease still held", r)
	}
	if n := e.count(`SELECT count(*) FROM lethe.dead_letters WHERE msg_offset = 0 AND retry_count = 0 AND payload = '"bad"'`); n != 1 {
		t.Errorf("%d matching dead letters, want 1", n)
	}
	if r := e.ackMsg(resp.Messages[1], api.AckCompleted); !r.LeaseReleased {
		t.Errorf("last ack of the lease = %+v, want leaseReleased", r)
	}
	next := e.popN(engine.PopRequest{Queue: "dlq", Group: "g", Batch: 10}, 1)
	if corePayloads(next)[0] != `"after"` {
		t.Errorf("after dlq got %v", corePayloads(next))
	}
}

// The wire contract: acked messages are never delivered again to that group,
// even when an earlier message of the same lease failed.
func TestCoreAckCompletedAfterAFailureIsNotRedelivered(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	e.push("mixed", "", `0`, `1`, `2`)
	resp := e.popN(engine.PopRequest{Queue: "mixed", Group: "g", Batch: 3}, 3)
	e.ackMsg(resp.Messages[0], api.AckCompleted)
	e.ackMsg(resp.Messages[1], api.AckFailed)
	e.ackMsg(resp.Messages[2], api.AckCompleted)
	e.clock.Advance(time.Second) // the default retryDelay
	again := e.pop(engine.PopRequest{Queue: "mixed", Group: "g", Batch: 10})
	if strings.Join(corePayloads(again), ",") != "1" {
		t.Errorf("after completed, failed, completed the redelivery is %v, want only the failed message 1", corePayloads(again))
	}
}

func TestCoreAckBadLeaseAndUnknownIDs(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	e.push("bad", "", `1`)
	resp := e.popN(engine.PopRequest{Queue: "bad", Group: "g"}, 1)
	m := resp.Messages[0]
	before := e.rowCounts()
	var cursorBefore string
	_ = e.pool.QueryRow(e.ctx, `SELECT row(c.*)::text FROM lethe.cursors c`).Scan(&cursorBefore)
	cases := []struct {
		name string
		req  api.AckRequest
		want string // part of the error
	}{
		{"wrong lease", api.AckRequest{TransactionID: m.TransactionID, PartitionID: m.PartitionID, LeaseID: uuid.NewString(), ConsumerGroup: "g"}, "lease"},
		{"unknown transaction", api.AckRequest{TransactionID: "nope", PartitionID: m.PartitionID, ConsumerGroup: "g"}, "nope"},
		{"unknown partition", api.AckRequest{TransactionID: m.TransactionID, PartitionID: uuid.NewString(), ConsumerGroup: "g"}, "does not exist"},
		{"malformed partition", api.AckRequest{TransactionID: m.TransactionID, PartitionID: "not-a-uuid", ConsumerGroup: "g"}, "not a partition id"},
		{"missing transaction", api.AckRequest{PartitionID: m.PartitionID, ConsumerGroup: "g"}, "transactionId"},
		{"group with no cursor", api.AckRequest{TransactionID: m.TransactionID, PartitionID: m.PartitionID, ConsumerGroup: "stranger"}, "stranger"},
		{"bad status", api.AckRequest{TransactionID: m.TransactionID, PartitionID: m.PartitionID, ConsumerGroup: "g", Status: "maybe"}, "status"},
	}
	for _, c := range cases {
		res, err := e.eng.Ack(e.ctx, []api.AckRequest{c.req}, "")
		if err != nil {
			t.Errorf("%s: error %v, want success:false", c.name, err)
			continue
		}
		if res[0].Success || !strings.Contains(res[0].Error, c.want) {
			t.Errorf("%s: %+v, want success false with an error mentioning %q", c.name, res[0], c.want)
		}
	}
	coreSameCounts(t, before, e.rowCounts())
	var cursorAfter string
	_ = e.pool.QueryRow(e.ctx, `SELECT row(c.*)::text FROM lethe.cursors c`).Scan(&cursorAfter)
	if cursorAfter != cursorBefore {
		t.Errorf("rejected acks changed the cursor:\n%s\n%s", cursorBefore, cursorAfter)
	}
	// The lease is intact: the right ack still works.
	e.ackMsg(m, api.AckCompleted)
}

func TestCoreAckBatchMixedResultsInOrder(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	e.push("mix", "a", `1`, `2`)
	e.push("mix", "b", `3`)
	ra := e.popN(engine.PopRequest{Queue: "mix", Partition: "a", Group: "g", Batch: 2}, 2)
	rb := e.popN(engine.PopRequest{Queue: "mix", Partition: "b", Group: "g"}, 1)
	acks := []api.AckRequest{
		{TransactionID: ra.Messages[0].TransactionID, PartitionID: ra.PartitionID, LeaseID: ra.LeaseID, Status: "completed"},
		{TransactionID: "ghost", PartitionID: ra.PartitionID, Status: "completed"},
		{TransactionID: rb.Messages[0].TransactionID, PartitionID: rb.PartitionID, Status: "failed"},
		{TransactionID: "x", PartitionID: "garbage", Status: "completed"},
		{TransactionID: ra.Messages[1].TransactionID, PartitionID: ra.PartitionID, Status: "completed"},
	}
	res, err := e.eng.Ack(e.ctx, acks, "g")
	if err != nil {
		t.Fatal(err)
	}
	want := []bool{true, false, true, false, true}
	for i, r := range res {
		if r.Index != i || r.Success != want[i] || r.TransactionID != acks[i].TransactionID {
			t.Errorf("result %d = %+v, want index %d success %v", i, r, i, want[i])
		}
		if !r.Success && r.Error == "" {
			t.Errorf("result %d failed without a reason", i)
		}
	}
	if !res[4].LeaseReleased || !res[2].LeaseReleased {
		t.Errorf("leases of a and b are complete: %+v", res)
	}
	e.clock.Advance(time.Second) // the default retryDelay
	if again := e.pop(engine.PopRequest{Queue: "mix", Partition: "b", Group: "g"}); len(again.Messages) != 1 || again.Messages[0].RetryCount != 1 {
		t.Errorf("b after a failed ack = %+v, want the message again with retryCount 1", again.Messages)
	}
	if again := e.pop(engine.PopRequest{Queue: "mix", Partition: "a", Group: "g"}); len(again.Messages) != 0 {
		t.Errorf("a after acking both = %v", corePayloads(again))
	}
}

func TestCoreExtendLease(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	e.configure("ext", `{"leaseTime": 30}`)
	e.push("ext", "", `1`)
	resp := e.popN(engine.PopRequest{Queue: "ext", Group: "g"}, 1)
	leaseUntil := func() time.Time {
		var until time.Time
		if err := e.pool.QueryRow(e.ctx, `SELECT lease_until FROM lethe.cursors WHERE lease_id = $1`, resp.LeaseID).Scan(&until); err != nil {
			t.Fatalf("lease_until: %v", err)
		}
		return until
	}
	e.clock.Advance(20 * time.Second)
	until, err := e.eng.ExtendLease(e.ctx, resp.LeaseID, 120)
	if err != nil {
		t.Fatal(err)
	}
	want := coreT0.Add(140 * time.Second)
	if !until.Equal(want) || !leaseUntil().Equal(want) {
		t.Errorf("extend by 120 s at +20 s: answered %s, stored %s, want %s", until, leaseUntil(), want)
	}
	// seconds 0: the queue's leaseTime.
	if _, err := e.eng.ExtendLease(e.ctx, resp.LeaseID, 0); err != nil {
		t.Fatal(err)
	}
	if got := leaseUntil(); !got.Equal(coreT0.Add(50 * time.Second)) {
		t.Errorf("extend with seconds 0: lease_until %s, want now + leaseTime %s", got, coreT0.Add(50*time.Second))
	}
	// The extension holds: past the original expiry nobody else gets it.
	e.clock.Advance(25 * time.Second)
	if other := e.pop(engine.PopRequest{Queue: "ext", Group: "g"}); len(other.Messages) != 0 {
		t.Errorf("extended lease was taken over: %v", corePayloads(other))
	}
	if _, err := e.eng.ExtendLease(e.ctx, uuid.NewString(), 10); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("extend an unknown lease: %v, want ErrNotFound", err)
	}
	for _, bad := range []struct {
		id  string
		sec int
	}{{"nope", 10}, {resp.LeaseID, -1}, {resp.LeaseID, 8 * 24 * 3600}} {
		if _, err := e.eng.ExtendLease(e.ctx, bad.id, bad.sec); !errors.Is(err, engine.ErrInvalid) {
			t.Errorf("extend %q by %d: %v, want ErrInvalid", bad.id, bad.sec, err)
		}
	}
	e.ackMsg(resp.Messages[0], api.AckCompleted)
	if _, err := e.eng.ExtendLease(e.ctx, resp.LeaseID, 10); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("extend a released lease: %v, want ErrNotFound", err)
	}
}

package streams_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/lethe-mq/lethe/client/api"
)

// registered registers query name reading src, which it creates.
func registered(t *testing.T, b *bundle, name string) string {
	t.Helper()
	b.queue(t, "src")
	var q api.StreamQueryResponse
	b.must(t, http.StatusOK, http.MethodPost, "/streams/v1/queries",
		api.StreamQueryRequest{Name: name, SourceQueue: "src", ConfigHash: "h"}, &q)
	return q.QueryID
}

func boolp(v bool) *bool { return &v }

// stateOf reads every key of (query, partition) as key -> value text.
func stateOf(t *testing.T, b *bundle, query, partition string) map[string]string {
	t.Helper()
	var st api.StreamStateResponse
	b.must(t, http.StatusOK, http.MethodPost, "/streams/v1/state/get",
		api.StreamStateRequest{QueryID: query, PartitionID: partition}, &st)
	out := map[string]string{}
	for _, r := range st.Rows {
		out[r.Key] = string(r.Value)
	}
	return out
}

// A cycle writes its state, pushes to the sink and acks the source
// together: afterwards the state is there, the sink holds the output and
// the source messages are not delivered again.
func TestCycleCommitsStatePushAndAckTogether(t *testing.T) {
	t.Parallel()
	b := setup(t, 0)
	query := registered(t, b, "agg")
	b.push(t, "src", "p1", "m1", "m2", "m3")
	in := b.pop(t, "src", "p1", "g", 10)
	if len(in.Messages) != 3 {
		t.Fatalf("popped %d messages, want 3", len(in.Messages))
	}
	last := in.Messages[2]
	var out api.StreamCycleResponse
	b.must(t, http.StatusOK, http.MethodPost, "/streams/v1/cycle", api.StreamCycleRequest{
		QueryID: query, PartitionID: last.PartitionID, ConsumerGroup: "g",
		StateOps: []api.StreamStateOp{
			{Type: "upsert", Key: "sum", Value: json.RawMessage(`{"acc":3}`)},
			{Type: "upsert", Key: "gone", Value: json.RawMessage(`1`)},
			{Type: "delete", Key: "gone"},
		},
		PushItems: []api.PushItem{{Queue: "sink", Partition: "p1", Payload: json.RawMessage(`{"sum":3}`)}},
		Ack:       &api.StreamAck{TransactionID: last.TransactionID, LeaseID: last.LeaseID, Status: "completed", Count: intp(3)},
	}, &out)
	if !out.Success || out.StateOpsApplied != 3 || len(out.PushResults) != 1 || out.AckResult == nil ||
		!out.AckResult.LeaseReleased || out.AckResult.Count != 3 || out.QueueName == nil || *out.QueueName != "src" {
		t.Fatalf("cycle answered %+v (ack %+v)", out, out.AckResult)
	}
	if got := stateOf(t, b, query, last.PartitionID); len(got) != 1 || got["sum"] != `{"acc":3}` {
		t.Fatalf("state after the cycle: %v, want only sum = {\"acc\":3}", got)
	}
	if sink := b.pop(t, "sink", "p1", "reader", 10); len(sink.Messages) != 1 || string(sink.Messages[0].Data) != `{"sum":3}` {
		t.Fatalf("sink holds %+v, want the one pushed output", sink.Messages)
	}
	if again := b.pop(t, "src", "p1", "g", 10); len(again.Messages) != 0 {
		t.Fatalf("the acked source messages were delivered again: %+v", again.Messages)
	}
}

func intp(v int) *int { return &v }

// A cycle whose ack cannot apply (a lease that is not the live one) writes
// nothing: no state, no sink queue, no push, and the source lease stands.
func TestFailingCycleWritesNothing(t *testing.T) {
	t.Parallel()
	b := setup(t, 0)
	query := registered(t, b, "agg")
	b.push(t, "src", "p1", "m1", "m2")
	in := b.pop(t, "src", "p1", "g", 10)
	last := in.Messages[1]
	var out api.StreamCycleResponse
	b.must(t, http.StatusOK, http.MethodPost, "/streams/v1/cycle", api.StreamCycleRequest{
		QueryID: query, PartitionID: last.PartitionID, ConsumerGroup: "g",
		StateOps:  []api.StreamStateOp{{Type: "upsert", Key: "sum", Value: json.RawMessage(`1`)}},
		PushItems: []api.PushItem{{Queue: "never-created", Payload: json.RawMessage(`1`)}},
		Ack:       &api.StreamAck{TransactionID: last.TransactionID, LeaseID: "00000000-0000-0000-0000-0000000000aa"},
	}, &out)
	if out.Success || out.Error == "" {
		t.Fatalf("a cycle acking under a lease that is not held answered %+v, want success false with the reason", out)
	}
	if got := stateOf(t, b, query, last.PartitionID); len(got) != 0 {
		t.Fatalf("the failed cycle wrote state %v", got)
	}
	b.must(t, http.StatusNotFound, http.MethodGet, "/api/v1/resources/queues/never-created", nil, nil)
	var n int
	if err := b.srv.Pool.QueryRow(context.Background(), `SELECT count(*) FROM lethe.queues WHERE name = 'never-created'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("the failed cycle's sink queue exists (%d rows, err %v)", n, err)
	}
	// The lease is untouched: the same messages are acked by a good cycle.
	b.must(t, http.StatusOK, http.MethodPost, "/streams/v1/cycle", api.StreamCycleRequest{
		QueryID: query, PartitionID: last.PartitionID, ConsumerGroup: "g",
		Ack: &api.StreamAck{TransactionID: last.TransactionID, LeaseID: last.LeaseID},
	}, &out)
	if !out.Success {
		t.Fatalf("the retried cycle failed: %s", out.Error)
	}
	// A retry of a committed cycle (the lease is released) is refused, so
	// its state and pushes cannot be applied twice.
	b.must(t, http.StatusOK, http.MethodPost, "/streams/v1/cycle", api.StreamCycleRequest{
		QueryID: query, PartitionID: last.PartitionID, ConsumerGroup: "g",
		PushItems: []api.PushItem{{Queue: "never-created", Payload: json.RawMessage(`1`)}},
		Ack:       &api.StreamAck{TransactionID: last.TransactionID, LeaseID: last.LeaseID},
	}, &out)
	if out.Success {
		t.Fatal("a cycle repeating a committed ack succeeded; exactly-once needs it refused")
	}
	b.must(t, http.StatusNotFound, http.MethodGet, "/api/v1/resources/queues/never-created", nil, nil)
}

// Streams refuse what names nothing: a query over a queue that does not
// exist, and a cycle or a state read of a partition that does not exist
// (never made, or gone with its queue), answer 404 naming the field and
// the missing name, having written nothing. The usual order, a queue made
// by its first push and then the query registered, works.
func TestStreamsRefuseMissingQueuesAndPartitions(t *testing.T) {
	t.Parallel()
	b := setup(t, 0)
	var e api.Error
	b.must(t, http.StatusNotFound, http.MethodPost, "/streams/v1/queries",
		api.StreamQueryRequest{Name: "agg", SourceQueue: "orders", ConfigHash: "h"}, &e)
	if e.Field != "source_queue" || !strings.Contains(e.Error, `"orders"`) {
		t.Fatalf("a query over a missing queue: field %q error %q, want source_queue naming orders", e.Field, e.Error)
	}
	if n := count(t, b, `SELECT count(*) FROM lethe.stream_queries`); n != 0 {
		t.Fatalf("the refused registration wrote %d registrations", n)
	}

	b.push(t, "orders", "p1", "m1")
	var q api.StreamQueryResponse
	b.must(t, http.StatusOK, http.MethodPost, "/streams/v1/queries",
		api.StreamQueryRequest{Name: "agg", SourceQueue: "orders", ConfigHash: "h"}, &q)
	pid := partitionID(t, b, "orders", "p1")

	missing := uuid.NewString()
	cycle := api.StreamCycleRequest{QueryID: q.QueryID, PartitionID: missing,
		StateOps:  []api.StreamStateOp{{Type: "upsert", Key: "k", Value: json.RawMessage(`1`)}},
		PushItems: []api.PushItem{{Queue: "sink", Payload: json.RawMessage(`1`)}}}
	for _, c := range []struct {
		path string
		body any
	}{
		{"/streams/v1/cycle", cycle},
		{"/streams/v1/state/get", api.StreamStateRequest{QueryID: q.QueryID, PartitionID: missing}},
	} {
		e = api.Error{}
		b.must(t, http.StatusNotFound, http.MethodPost, c.path, c.body, &e)
		if e.Field != "partition_id" || !strings.Contains(e.Error, missing) {
			t.Errorf("%s of a missing partition: field %q error %q, want partition_id naming %s", c.path, e.Field, e.Error, missing)
		}
	}
	if n := count(t, b, `SELECT count(*) FROM lethe.stream_state`); n != 0 {
		t.Fatalf("the refused cycle wrote %d state rows", n)
	}
	b.must(t, http.StatusNotFound, http.MethodGet, "/api/v1/resources/queues/sink", nil, nil)

	// A real partition takes the same cycle; once its queue is deleted,
	// the partition is missing too.
	cycle.PartitionID = pid
	var out api.StreamCycleResponse
	b.must(t, http.StatusOK, http.MethodPost, "/streams/v1/cycle", cycle, &out)
	if !out.Success {
		t.Fatalf("the cycle of partition %s failed: %s", pid, out.Error)
	}
	b.must(t, http.StatusOK, http.MethodDelete, "/api/v1/resources/queues/orders", nil, nil)
	b.must(t, http.StatusNotFound, http.MethodPost, "/streams/v1/state/get", api.StreamStateRequest{QueryID: q.QueryID, PartitionID: pid}, nil)
}

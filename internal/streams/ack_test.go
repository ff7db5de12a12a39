package streams_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/client/api"
)

// release_lease false (a gate's partial ack) commits the messages through
// the acked one and keeps the rest leased: they are not handed to another
// consumer until the lease expires, and then delivered again in order.
func TestPartialAckKeepsTheRestLeasedUntilItExpires(t *testing.T) {
	t.Parallel()
	b := setup(t, 0)
	query := registered(t, b, "gate")
	b.must(t, http.StatusOK, http.MethodPost, "/api/v1/configure",
		map[string]any{"queue": "src", "options": map[string]any{"leaseTime": 10, "retryDelay": 0, "retryLimit": 100}}, nil)
	b.push(t, "src", "p1", "m1", "m2", "m3")
	in := b.pop(t, "src", "p1", "g", 10)
	first := in.Messages[0]
	var out api.StreamCycleResponse
	b.must(t, http.StatusOK, http.MethodPost, "/streams/v1/cycle", api.StreamCycleRequest{
		QueryID: query, PartitionID: first.PartitionID, ConsumerGroup: "g", ReleaseLease: boolp(false),
		Ack: &api.StreamAck{TransactionID: first.TransactionID, LeaseID: first.LeaseID, Count: intp(1)},
	}, &out)
	if !out.Success || out.AckResult == nil || out.AckResult.LeaseReleased {
		t.Fatalf("partial ack answered %+v (ack %+v), want success with the lease kept", out, out.AckResult)
	}
	if again := b.pop(t, "src", "p1", "g", 10); len(again.Messages) != 0 {
		t.Fatalf("while the lease lives the rest was delivered again: %+v", again.Messages)
	}
	b.clk.Set(t0.Add(11 * time.Second))
	again := b.pop(t, "src", "p1", "g", 10)
	if len(again.Messages) != 2 || again.Messages[0].TransactionID != "m2" || again.Messages[1].TransactionID != "m3" {
		t.Fatalf("after the lease expired: %+v, want m2, m3 in order", again.Messages)
	}
}

// An ack with status failed dead-letters the named message and commits the
// ones before it.
func TestFailedCycleAckDeadLettersTheMessage(t *testing.T) {
	t.Parallel()
	b := setup(t, 0)
	query := registered(t, b, "q")
	b.push(t, "src", "p1", "m1", "m2")
	in := b.pop(t, "src", "p1", "g", 10)
	last := in.Messages[1]
	var out api.StreamCycleResponse
	b.must(t, http.StatusOK, http.MethodPost, "/streams/v1/cycle", api.StreamCycleRequest{
		QueryID: query, PartitionID: last.PartitionID, ConsumerGroup: "g",
		Ack: &api.StreamAck{TransactionID: last.TransactionID, LeaseID: last.LeaseID, Status: "failed", Error: "bad input"},
	}, &out)
	if !out.Success || out.AckResult == nil || !out.AckResult.DLQ || !out.AckResult.LeaseReleased {
		t.Fatalf("failed ack answered %+v (ack %+v), want success, dlq and the lease released", out, out.AckResult)
	}
	var dlq struct {
		Messages []struct {
			TransactionID string `json:"transactionId"`
			ErrorMessage  string `json:"errorMessage"`
		} `json:"messages"`
	}
	b.must(t, http.StatusOK, http.MethodGet, "/api/v1/dlq?queue=src&consumerGroup=g", nil, &dlq)
	if len(dlq.Messages) != 1 || dlq.Messages[0].TransactionID != "m2" {
		t.Fatalf("dead letters: %+v, want m2 alone", dlq.Messages)
	}
	if again := b.pop(t, "src", "p1", "g", 10); len(again.Messages) != 0 {
		t.Fatalf("messages delivered again after the cycle: %+v", again.Messages)
	}
}

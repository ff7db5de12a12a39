package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/lethe-mq/lethe/client/api"
)

// The behaviours below are Queen's (server 0.15) as its clients depend on
// them; each test names the one it pins.

// An empty push is 201 [] and writes nothing (clients push an empty tail
// batch at the end of a loop), with maintenance mode on or off.
func TestQueenEmptyPushIs201EmptyArray(t *testing.T) {
	t.Parallel()
	r := startCoreReplica(t, nil)
	for _, maintenance := range []bool{false, true} {
		r.call("POST", "/api/v1/system/maintenance", fmt.Sprintf(`{"enabled":%t}`, maintenance), http.StatusOK, nil)
		res := r.do("POST", "/api/v1/push", `{"items":[]}`)
		if res.status != http.StatusCreated || strings.TrimSpace(string(res.body)) != "[]" {
			t.Errorf("maintenance %t: empty push = %d %s, want 201 []", maintenance, res.status, res.body)
		}
	}
	var queues struct{ Total int }
	r.call("GET", "/api/v1/resources/queues", "", http.StatusOK, &queues)
	if queues.Total != 0 {
		t.Errorf("an empty push created %d queues", queues.Total)
	}
	// A transaction's push operation with no items is fine too.
	var tx api.TransactionResponse
	r.call("POST", "/api/v1/transaction", `{"operations":[{"type":"push","items":[]}]}`, http.StatusOK, &tx)
	if !tx.Success || len(tx.Results) != 1 || string(tx.Results[0]) != "[]" {
		t.Errorf("transaction with an empty push = %+v", tx)
	}
}

// subscriptionMode is never refused: "new" means new, anything else all
// (clients send from_beginning).
func TestQueenSubscriptionModeAnyValue(t *testing.T) {
	t.Parallel()
	r := startCoreReplica(t, nil)
	r.push(api.PushItem{Queue: "subs", Payload: json.RawMessage(`1`)})
	r.clock.Advance(time.Second)
	got := r.pop("/api/v1/pop/queue/subs?consumerGroup=g&subscriptionMode=from_beginning")
	if len(got.Messages) != 1 {
		t.Errorf("subscriptionMode=from_beginning got %d messages, want the 1 stored", len(got.Messages))
	}
	if got := r.pop("/api/v1/pop/queue/subs?consumerGroup=fresh&subscriptionMode=new"); len(got.Messages) != 0 {
		t.Errorf("subscriptionMode=new got %d old messages", len(got.Messages))
	}
}

// partitions=N: batch caps the messages of all claimed partitions together,
// and they share one lease id, which one extend renews.
func TestQueenMultiPartitionPopSharesOneLease(t *testing.T) {
	t.Parallel()
	r := startCoreReplica(t, nil)
	for i := range 4 {
		r.push(api.PushItem{Queue: "mp", Partition: fmt.Sprint("p", i), Payload: json.RawMessage(`1`)},
			api.PushItem{Queue: "mp", Partition: fmt.Sprint("p", i), Payload: json.RawMessage(`2`)})
	}
	got := r.pop("/api/v1/pop/queue/mp?consumerGroup=g&batch=5&partitions=4")
	if len(got.Messages) != 5 || got.PartitionsClaimed != 3 {
		t.Fatalf("batch=5&partitions=4 gave %d messages of %d partitions, want 5 of 3", len(got.Messages), got.PartitionsClaimed)
	}
	for _, m := range got.Messages {
		if m.LeaseID != got.LeaseID {
			t.Errorf("message of %s under lease %s, want the pop's %s", m.Partition, m.LeaseID, got.LeaseID)
		}
	}
	var ext api.ExtendLeaseResponse
	r.call("POST", "/api/v1/lease/"+got.LeaseID+"/extend", `{"seconds":600}`, http.StatusOK, &ext)
	if !ext.Success {
		t.Errorf("extend = %+v", ext)
	}
	acks := make([]api.AckRequest, len(got.Messages))
	for i, m := range got.Messages {
		acks[i] = api.AckRequest{TransactionID: m.TransactionID, PartitionID: m.PartitionID, LeaseID: m.LeaseID}
	}
	var results []api.AckResult
	r.call("POST", "/api/v1/ack/batch", coreJSON(api.AckBatchRequest{ConsumerGroup: "g", Acknowledgments: acks}), http.StatusOK, &results)
	for i, res := range results {
		if !res.Success {
			t.Errorf("ack %d = %+v", i, res)
		}
	}
}

// A popped message without a trace id or producer carries both as null.
func TestQueenPoppedMessageNulls(t *testing.T) {
	t.Parallel()
	r := startCoreReplica(t, nil)
	r.push(api.PushItem{Queue: "nulls", Payload: json.RawMessage(`{}`)})
	res := r.do("GET", "/api/v1/pop/queue/nulls", "")
	var body struct{ Messages []map[string]any }
	if err := json.Unmarshal(res.body, &body); err != nil || len(body.Messages) != 1 {
		t.Fatalf("pop: %d %s", res.status, res.body)
	}
	for _, key := range []string{"traceId", "producerSub"} {
		if v, ok := body.Messages[0][key]; !ok || v != nil {
			t.Errorf("%s = %v (present %t), want null", key, v, ok)
		}
	}
}

// Queen creates a queue named "" on configure; lethe refuses it on purpose
// (docs/api.md says why): no route could pop or delete it.
func TestQueenConfigureEmptyQueueRefused(t *testing.T) {
	t.Parallel()
	r := startCoreReplica(t, nil)
	res := r.do("POST", "/api/v1/configure", `{"queue":"","options":{}}`)
	var e api.Error
	if err := json.Unmarshal(res.body, &e); err != nil || res.status != http.StatusBadRequest || e.Field != "queue" {
		t.Errorf(`configure {"queue":""} = %d %s, want 400 naming the queue`, res.status, res.body)
	}
}

// With JWTs on, a push stamps the token's sub as producerSub and ignores
// one in the body (Queen's anti-impersonation); bad tokens answer 401.
func TestQueenJWTStampsProducerSub(t *testing.T) {
	t.Parallel()
	r := startCoreReplica(t, withJWT)
	alice := signedJWT(t, "alice", "read-write")
	res := doWithToken(t, "POST", r.url+"/api/v1/push", alice,
		`{"items":[{"queue":"jwt","payload":1,"producerSub":"mallory"}]}`)
	if res.status != http.StatusCreated {
		t.Fatalf("push with a JWT: %d %s", res.status, res.body)
	}
	res = doWithToken(t, "GET", r.url+"/api/v1/pop/queue/jwt", alice, "")
	var pop api.PopResponse
	if err := json.Unmarshal(res.body, &pop); err != nil || len(pop.Messages) != 1 || pop.Messages[0].ProducerSub != "alice" {
		t.Errorf("popped %d %s, want producerSub alice", res.status, res.body)
	}
	expired, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": "x", "role": "admin",
		"exp": coreT0.Add(-time.Hour).Unix()}).SignedString([]byte(testJWTSecret))
	for name, tok := range map[string]string{"expired": expired, "wrong secret": signedJWT(t, "x", "admin") + "x", "none": ""} {
		res := doWithToken(t, "GET", r.url+"/api/v1/resources/queues", tok, "")
		var e api.Error
		if res.status != http.StatusUnauthorized || json.Unmarshal(res.body, &e) != nil || e.Error == "" {
			t.Errorf("%s token: %d %s, want 401 with a reason", name, res.status, res.body)
		}
	}
}

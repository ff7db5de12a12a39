package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/config"
)

func TestCoreHTTPPushAndPop(t *testing.T) {
	t.Parallel()
	r := startCoreReplica(t, nil)
	// The wire shape of a push answer, as Queen's clients read it.
	res := r.do("POST", "/api/v1/push", `{"items":[
		{"queue":"web","payload":{"a":1},"transactionId":"t1","traceId":"tr1"},
		{"queue":"web","partition":"p2","payload":[1,2]},
		{"queue":"web"}]}`)
	if res.status != http.StatusCreated {
		t.Fatalf("push: %d %s", res.status, res.body)
	}
	var raw []map[string]any
	if err := json.Unmarshal(res.body, &raw); err != nil || len(raw) != 3 {
		t.Fatalf("push answer %s is not an array of 3 (%v)", res.body, err)
	}
	for i, item := range raw {
		for _, key := range []string{"index", "transaction_id", "transactionId", "status", "message_id", "partition_id", "queueName"} {
			if _, ok := item[key]; !ok {
				t.Errorf("push result %d lacks %q: %v", i, key, item)
			}
		}
		if item["status"] != "queued" || item["index"] != float64(i) {
			t.Errorf("push result %d = %v", i, item)
		}
	}
	if raw[0]["trace_id"] != "tr1" || raw[0]["transaction_id"] != "t1" {
		t.Errorf("push result 0 = %v, want the given ids", raw[0])
	}

	resp := r.pop("/api/v1/pop/queue/web/partition/Default?batch=10&consumerGroup=g")
	if len(resp.Messages) != 2 || string(resp.Messages[0].Data) != `{"a":1}` || string(resp.Messages[1].Data) != "null" {
		t.Fatalf("pop of Default = %+v", resp.Messages)
	}
	if resp.Messages[0].TraceID != "tr1" || resp.Messages[0].PartitionID != raw[0]["partition_id"] || resp.LeaseID == "" {
		t.Errorf("pop message = %+v", resp.Messages[0])
	}
	// A pop answer carries the fields Queen's clients read.
	res = r.do("GET", "/api/v1/pop/queue/web?consumerGroup=g", "")
	var popRaw map[string]any
	if err := json.Unmarshal(res.body, &popRaw); err != nil || res.status != http.StatusOK {
		t.Fatalf("wildcard pop: %d %s", res.status, res.body)
	}
	for _, key := range []string{"success", "queue", "partition", "partitionId", "leaseId", "consumerGroup", "messages"} {
		if _, ok := popRaw[key]; !ok {
			t.Errorf("pop answer lacks %q: %s", key, res.body)
		}
	}
	// Everything is leased now: 204, with no body.
	if got := r.pop("/api/v1/pop/queue/web?consumerGroup=g"); len(got.Messages) != 0 {
		t.Errorf("pop with all partitions leased got %d messages", len(got.Messages))
	}
	if got := r.pop("/api/v1/pop/queue/nothing-here"); len(got.Messages) != 0 {
		t.Errorf("pop of an unknown queue got messages")
	}
	// Names with spaces and slashes survive the URL.
	r.push(api.PushItem{Queue: "a queue", Partition: "tenant/42", Payload: json.RawMessage(`7`)})
	got := r.pop("/api/v1/pop/queue/" + url.PathEscape("a queue") + "/partition/" + url.PathEscape("tenant/42"))
	if len(got.Messages) != 1 || got.Messages[0].Partition != "tenant/42" {
		t.Errorf("pop of an escaped partition name = %+v", got)
	}
}

func TestCoreHTTPDuplicatePush(t *testing.T) {
	t.Parallel()
	r := startCoreReplica(t, nil)
	first := r.push(api.PushItem{Queue: "d", TransactionID: "same", Payload: json.RawMessage(`1`)})
	again := r.push(api.PushItem{Queue: "d", TransactionID: "same", Payload: json.RawMessage(`2`)},
		api.PushItem{Queue: "d", TransactionID: "same", Payload: json.RawMessage(`3`)})
	for i, a := range again {
		if a.Status != api.StatusDuplicate || a.MessageID != first[0].MessageID {
			t.Errorf("repeat %d = %+v, want duplicate of %s", i, a, first[0].MessageID)
		}
	}
	if n := r.count(`SELECT coalesce(sum(frame_count), 0) FROM lethe.segments`); n != 1 {
		t.Errorf("%d messages stored, want 1", n)
	}
}

func TestCoreHTTPPayloadOverLimit(t *testing.T) {
	t.Parallel()
	r := startCoreReplica(t, func(c *config.Server) { c.MaxPayloadBytes = 4096 })
	r.push(api.PushItem{Queue: "lim", Payload: json.RawMessage(`"ok"`)})
	before := r.rowCounts()
	body := fmt.Sprintf(`{"items":[{"queue":"lim","payload":"small"},{"queue":"new-q","payload":"%s"}]}`, strings.Repeat("z", 5000))
	res := r.do("POST", "/api/v1/push", body)
	requireCoreError(t, "payload over MAX_PAYLOAD_BYTES", res, http.StatusRequestEntityTooLarge)
	coreSameCounts(t, "payload over the limit", before, r.rowCounts())
	r.push(api.PushItem{Queue: "lim", Payload: json.RawMessage(`"still fine"`)})
}

func TestCoreHTTPPopWait(t *testing.T) {
	t.Parallel()
	r := startCoreReplica(t, nil)
	type answer struct {
		res coreResult
		at  time.Time
	}
	done := make(chan answer, 1)
	go func() {
		res := coreDo(t, "GET", r.url+"/api/v1/pop/queue/waiting?wait=true&timeout=10000&consumerGroup=g", "")
		done <- answer{res, time.Now()}
	}()
	// The poll is in the engine once the server counts it; it subscribes to
	// wake-ups before it first looks, so the push below wakes it or is seen.
	waitFor(t, "the long poll to wait", func() bool { return r.srv.Server.LongPolls() == 1 })
	pushedAt := time.Now()
	r.push(api.PushItem{Queue: "waiting", Payload: json.RawMessage(`"wake up"`)})
	a := <-done
	if a.res.status != http.StatusOK || !strings.Contains(string(a.res.body), "wake up") {
		t.Fatalf("long poll: %d %s", a.res.status, a.res.body)
	}
	lat := a.at.Sub(pushedAt)
	t.Logf("long poll answered %s after the push started", lat)
	if lat > time.Second {
		t.Errorf("long poll answered %s after the push, want under 1 s", lat)
	}
	start := time.Now()
	res := r.do("GET", "/api/v1/pop/queue/waiting?wait=true&timeout=400&consumerGroup=g", "")
	took := time.Since(start)
	if res.status != http.StatusNoContent {
		t.Errorf("long poll with nothing to get: %d %s, want 204", res.status, res.body)
	}
	if took < 400*time.Millisecond || took > 3*time.Second {
		t.Errorf("long poll with timeout 400 ms took %s", took)
	}
}

func TestCoreHTTPAckPaths(t *testing.T) {
	t.Parallel()
	r := startCoreReplica(t, nil)
	r.call("POST", "/api/v1/configure", `{"queue":"acks","options":{"retryLimit":1,"leaseTime":10}}`, http.StatusOK, nil)
	r.push(api.PushItem{Queue: "acks", Payload: json.RawMessage(`1`)}, api.PushItem{Queue: "acks", Payload: json.RawMessage(`2`)})
	m := r.pop("/api/v1/pop/queue/acks?consumerGroup=g").Messages[0]

	// Problems with one ack are success:false with a reason, never a 500.
	for name, body := range map[string]string{
		"wrong lease":         coreJSON(api.AckRequest{TransactionID: m.TransactionID, PartitionID: m.PartitionID, LeaseID: uuid.NewString(), ConsumerGroup: "g"}),
		"unknown partition":   coreJSON(api.AckRequest{TransactionID: m.TransactionID, PartitionID: uuid.NewString(), ConsumerGroup: "g"}),
		"malformed partition": coreJSON(api.AckRequest{TransactionID: m.TransactionID, PartitionID: "12345", ConsumerGroup: "g"}),
		"unknown transaction": coreJSON(api.AckRequest{TransactionID: "who", PartitionID: m.PartitionID, ConsumerGroup: "g"}),
		"unknown status":      coreJSON(api.AckRequest{TransactionID: m.TransactionID, PartitionID: m.PartitionID, ConsumerGroup: "g", Status: "meh"}),
	} {
		res := r.do("POST", "/api/v1/ack", body)
		if res.status >= 500 {
			t.Errorf("%s: status %d %s", name, res.status, res.body)
			continue
		}
		if res.status == http.StatusBadRequest {
			requireCoreError(t, name, res, http.StatusBadRequest)
			continue
		}
		var ar api.AckResult
		if err := json.Unmarshal(res.body, &ar); err != nil || res.status != http.StatusOK || ar.Success || ar.Error == "" {
			t.Errorf("%s: %d %s, want 200 success:false with a reason", name, res.status, res.body)
		}
	}
	// failed: redelivered with retryCount 1, then over retryLimit 1 it
	// goes to the dead letters and the group moves on.
	if ar := r.ack(api.AckRequest{TransactionID: m.TransactionID, PartitionID: m.PartitionID, LeaseID: m.LeaseID, Status: "failed", ConsumerGroup: "g"}); !ar.Success {
		t.Fatalf("failed ack: %+v", ar)
	}
	r.clock.Advance(time.Second) // the default retryDelay
	m2 := r.pop("/api/v1/pop/queue/acks?consumerGroup=g").Messages[0]
	if m2.ID != m.ID || m2.RetryCount != 1 {
		t.Fatalf("after a failed ack got %s retryCount %d, want %s with 1", m2.ID, m2.RetryCount, m.ID)
	}
	if ar := r.ack(api.AckRequest{TransactionID: m2.TransactionID, PartitionID: m2.PartitionID, LeaseID: m2.LeaseID, Status: "failed", ConsumerGroup: "g", Error: "boom"}); !ar.Success || !ar.DLQ {
		t.Fatalf("second failed ack with retryLimit 1: %+v, want dlq", ar)
	}
	if n := r.count(`SELECT count(*) FROM lethe.dead_letters WHERE group_name = 'g' AND error = 'boom' AND retry_count = 2`); n != 1 {
		t.Errorf("%d dead letters with the error and 2 failures, want 1", n)
	}
	m3 := r.pop("/api/v1/pop/queue/acks?consumerGroup=g").Messages[0]
	if string(m3.Data) != "2" {
		t.Errorf("after the dead letter got %s, want the next message", m3.Data)
	}
	// Batch: results in order, mixed.
	var batch []api.AckResult
	r.call("POST", "/api/v1/ack/batch", coreJSON(api.AckBatchRequest{ConsumerGroup: "g", Acknowledgments: []api.AckRequest{
		{TransactionID: "ghost", PartitionID: m3.PartitionID, Status: "completed"},
		{TransactionID: m3.TransactionID, PartitionID: m3.PartitionID, LeaseID: m3.LeaseID, Status: "completed"},
		{TransactionID: "x", PartitionID: "not-a-uuid", Status: "completed"},
	}}), http.StatusOK, &batch)
	if len(batch) != 3 || batch[0].Success || !batch[1].Success || batch[2].Success || batch[1].Index != 1 {
		t.Errorf("batch results %+v, want false, true, false in order", batch)
	}
	// Lease extension: unknown lease 404, malformed 400.
	m4 := r.pop("/api/v1/pop/queue/acks?consumerGroup=other")
	requireCoreError(t, "extend unknown lease", r.do("POST", "/api/v1/lease/"+uuid.NewString()+"/extend", `{"seconds":30}`), http.StatusNotFound)
	requireCoreError(t, "extend malformed lease", r.do("POST", "/api/v1/lease/abc/extend", `{"seconds":30}`), http.StatusBadRequest)
	r.clock.Advance(5 * time.Second)
	var ext api.ExtendLeaseResponse
	r.call("POST", "/api/v1/lease/"+m4.LeaseID+"/extend", `{"seconds":60}`, http.StatusOK, &ext)
	want := r.clock.Now().Add(60 * time.Second)
	if got, err := time.Parse(time.RFC3339Nano, ext.NewExpiresAt); err != nil || !got.Equal(want) || !ext.Success {
		t.Errorf("extend answered %+v, want newExpiresAt %s", ext, want)
	}
	if n := r.count(`SELECT count(*) FROM lethe.cursors WHERE lease_id = $1 AND lease_until = $2`, m4.LeaseID, want); n != 1 {
		t.Errorf("lease_until not moved to %s", want)
	}
	// No body: the queue's leaseTime.
	r.call("POST", "/api/v1/lease/"+m4.LeaseID+"/extend", "", http.StatusOK, &ext)
	if n := r.count(`SELECT count(*) FROM lethe.cursors WHERE lease_id = $1 AND lease_until = $2`, m4.LeaseID, r.clock.Now().Add(10*time.Second)); n != 1 {
		t.Errorf("extend without a body did not use leaseTime 10 s")
	}
}

func TestCoreHTTPTransaction(t *testing.T) {
	t.Parallel()
	r := startCoreReplica(t, nil)
	r.push(api.PushItem{Queue: "src", Payload: json.RawMessage(`"in"`)})
	m := r.pop("/api/v1/pop/queue/src").Messages[0]

	// A bad ack: success:false, and the push beside it did not happen.
	var tr api.TransactionResponse
	r.call("POST", "/api/v1/transaction", coreJSON(api.TransactionRequest{Operations: []api.Operation{
		{Type: "push", Items: []api.PushItem{{Queue: "src", Partition: "side", Payload: json.RawMessage(`"nope"`)}}},
		{Type: "ack", TransactionID: "unknown", PartitionID: m.PartitionID, Status: "completed"},
	}}), http.StatusOK, &tr)
	if tr.Success || tr.Error == "" {
		t.Errorf("transaction with a bad ack = %+v, want success false with a reason", tr)
	}
	if n := r.count(`SELECT count(*) FROM lethe.segments s JOIN lethe.partitions p ON p.id = s.partition_id WHERE p.name = 'side'`); n != 0 {
		t.Errorf("the push of a rolled-back transaction wrote %d segments", n)
	}
	// A good one commits both.
	r.call("POST", "/api/v1/transaction", coreJSON(api.TransactionRequest{Operations: []api.Operation{
		{Type: "ack", TransactionID: m.TransactionID, PartitionID: m.PartitionID, LeaseID: m.LeaseID, Status: "completed"},
		{Type: "push", Items: []api.PushItem{{Queue: "dst", Payload: json.RawMessage(`"out"`)}}},
	}}), http.StatusOK, &tr)
	if !tr.Success || len(tr.Results) != 2 {
		t.Fatalf("transaction = %+v", tr)
	}
	if got := r.pop("/api/v1/pop/queue/dst"); len(got.Messages) != 1 || string(got.Messages[0].Data) != `"out"` {
		t.Errorf("dst after the transaction = %+v", got.Messages)
	}
	r.clock.Advance(time.Hour)
	if got := r.pop("/api/v1/pop/queue/src"); len(got.Messages) != 0 {
		t.Errorf("src message acked in the transaction came back")
	}
	for name, body := range map[string]string{
		"empty operations":  `{"operations":[]}`,
		"no operations":     `{}`,
		"unknown operation": `{"operations":[{"type":"teleport"}]}`,
		"ack without ids":   `{"operations":[{"type":"ack"}]}`,
	} {
		requireCoreError(t, name, r.do("POST", "/api/v1/transaction", body), http.StatusBadRequest)
	}
}

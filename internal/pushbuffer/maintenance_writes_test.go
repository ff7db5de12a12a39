package pushbuffer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/lethe-mq/lethe/client/api"
)

// While push maintenance is on, only a plain push goes to the buffer:
// every other route whose pushes commit together with other writes (a
// transaction's pushes, a streams cycle's sink pushes, a dead letter's
// replay) answers 503 with Retry-After and writes nothing, and a
// transaction of acks alone goes through. Fails when a route writes a
// push to the database during push maintenance.
func TestPushMaintenanceHoldsEveryRouteThatPushes(t *testing.T) {
	t.Parallel()
	s := start(t, t.TempDir(), "")
	push(t, s.URL, api.PushItem{Queue: "held", Partition: "p", Payload: json.RawMessage(`1`)},
		api.PushItem{Queue: "held", Partition: "p", Payload: json.RawMessage(`2`)})
	var pop api.PopResponse
	call(t, "GET", s.URL+"/api/v1/pop/queue/held?consumerGroup=g&batch=2", nil, http.StatusOK, &pop)
	if len(pop.Messages) != 2 {
		t.Fatalf("pop before maintenance: %d messages, want 2", len(pop.Messages))
	}
	acked, dead := pop.Messages[0], pop.Messages[1]
	ackBody := func(m api.Message, status string) string {
		return fmt.Sprintf(`{"transactionId":%q,"partitionId":%q,"leaseId":%q,"consumerGroup":"g","status":%q}`,
			m.TransactionID, m.PartitionID, m.LeaseID, status)
	}
	call(t, "POST", s.URL+"/api/v1/ack", ackBody(dead, "dlq"), http.StatusOK, nil)
	var dlq api.DeadLetterList
	call(t, "GET", s.URL+"/api/v1/dlq?queue=held", nil, http.StatusOK, &dlq)
	if len(dlq.Messages) != 1 {
		t.Fatalf("dead letters before maintenance: %d, want 1", len(dlq.Messages))
	}
	setPush(t, s.URL, true)

	for what, c := range map[string]struct{ path, body string }{
		"a transaction that pushes": {"/api/v1/transaction",
			`{"operations":[{"type":"push","items":[{"queue":"fresh","payload":1}]}]}`},
		"a streams cycle that pushes": {"/streams/v1/cycle",
			`{"query_id":"q","partition_id":"` + acked.PartitionID + `","state_ops":[],"push_items":[{"queue":"fresh","payload":1}]}`},
		"a dead-letter replay": {"/api/v1/dlq/" + dlq.Messages[0].ID + "/replay", ""},
	} {
		res, err := http.Post(s.URL+c.path, "application/json", strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" ||
			!strings.Contains(string(body), "push maintenance") {
			t.Errorf("%s during push maintenance: %d (Retry-After %q) %s, want 503 naming push maintenance",
				what, res.StatusCode, res.Header.Get("Retry-After"), body)
		}
	}
	var fresh, replayed int
	if err := s.Pool.QueryRow(context.Background(), `SELECT count(*) FROM lethe.queues WHERE name = 'fresh'`).Scan(&fresh); err != nil {
		t.Fatal(err)
	}
	if err := s.Pool.QueryRow(context.Background(), `SELECT count(*) FROM lethe.dead_letters`).Scan(&replayed); err != nil {
		t.Fatal(err)
	}
	if fresh != 0 || replayed != 1 {
		t.Errorf("routes refused during push maintenance wrote: queue fresh %d, dead letters left %d (want 0, 1)", fresh, replayed)
	}

	var res api.TransactionResponse
	call(t, "POST", s.URL+"/api/v1/transaction", `{"operations":[`+strings.Replace(ackBody(acked, "completed"), "{", `{"type":"ack",`, 1)+`]}`,
		http.StatusOK, &res)
	if !res.Success {
		t.Errorf("a transaction of acks alone during push maintenance: %+v, want success", res)
	}
}

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/client"
	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/clock"
	"github.com/lethe-mq/lethe/internal/testserver"
)

// TestWireTypesMatchTheServer decodes what the server really answers into
// the api types, refusing unknown fields, and encodes it again: the result
// must be the same JSON, so no field is missing, misnamed or spelt with the
// wrong omitempty.
func TestWireTypesMatchTheServer(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(time.Date(2030, 1, 2, 3, 0, 0, 0, time.UTC))
	srv := testserver.Start(t, testserver.Options{Clock: clk})
	c := newTestClient(t, srv.URL)
	ctx := context.Background()

	mustLethe(t, "", "queue", "configure", "wire", "--server="+srv.URL, "--max-wait-time-seconds", "3600")
	if _, err := c.Push(ctx, api.PushItem{Queue: "wire", TransactionID: "w0", TraceID: "trace-0", Payload: []byte(`{"n":0}`)}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(2 * time.Hour) // w0 falls out of the max-wait window
	pushTxns(t, c, "wire", "", "w1", "w2")
	deadLetters(t, c, "wire", "dead", "w3")
	if _, err := c.Pop(ctx, "wire", client.PopOptions{Group: "leased", Batch: 1}); err != nil {
		t.Fatal(err)
	}
	if res, err := srv.Retention.RunCycle(ctx); err != nil || res.MaxWait.Frames == 0 {
		t.Fatalf("cycle: %+v, %v; want w0 evicted", res, err)
	}
	clk.Advance(10 * time.Minute)

	var page api.MessagePage
	wire(t, srv.URL, http.MethodGet, "/api/v1/messages?queue=wire", &page)
	if len(page.Messages) == 0 {
		t.Fatal("browse found nothing")
	}
	m := page.Messages[0]
	wire(t, srv.URL, http.MethodGet, "/api/v1/messages/"+m.PartitionID+"/"+m.TransactionID, &api.MessageDetail{})
	wire(t, srv.URL, http.MethodGet, "/api/v1/status", &api.Status{})
	wire(t, srv.URL, http.MethodGet, "/api/v1/resources/overview", &api.Overview{})
	wire(t, srv.URL, http.MethodGet, "/api/v1/consumer-groups", &[]api.GroupSummary{})
	wire(t, srv.URL, http.MethodGet, "/api/v1/consumer-groups/leased", &map[string]api.GroupQueue{})
	var lagging []api.LaggingPartition
	wire(t, srv.URL, http.MethodGet, "/api/v1/consumer-groups/lagging?minLagSeconds=0", &lagging)
	if len(lagging) == 0 {
		t.Fatal("no lagging partitions to check")
	}
	var dl api.DeadLetterList
	wire(t, srv.URL, http.MethodGet, "/api/v1/dlq", &dl)
	if len(dl.Messages) != 1 {
		t.Fatalf("dead letters: %+v", dl)
	}
	wire(t, srv.URL, http.MethodGet, "/api/v1/retention/status", &api.RetentionStatus{})
	wire(t, srv.URL, http.MethodGet, "/api/v1/analytics/postgres-stats", &api.PostgresStats{})
	var hist api.RetentionHistory
	wire(t, srv.URL, http.MethodGet, "/api/v1/retention/history?lostOnly=true", &hist)
	if len(hist.Entries) == 0 || len(hist.Entries[0].Lost) == 0 {
		t.Fatalf("history: %+v, want a deletion that lost messages", hist)
	}
	wire(t, srv.URL, http.MethodPost, "/api/v1/dlq/"+dl.Messages[0].ID+"/replay", &api.DeadLetterReplayed{})
	deadLetters(t, c, "wire", "dead", "w4")
	var again api.DeadLetterList
	wire(t, srv.URL, http.MethodGet, "/api/v1/dlq", &again)
	wire(t, srv.URL, http.MethodDelete, "/api/v1/dlq/"+again.Messages[0].ID, &api.DeadLetterDeleted{})
}

// wire calls the server and checks that its answer survives a strict
// decode into out and an encode back unchanged.
func wire(t *testing.T, base, method, path string, out any) {
	t.Helper()
	req, _ := http.NewRequest(method, base+path, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, raw)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		t.Fatalf("%s %s into %T: %v\n%s", method, path, out, err, raw)
	}
	again, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	var sent, ours any
	if err := json.Unmarshal(raw, &sent); err != nil {
		t.Fatalf("%s %s: the server's answer is not JSON: %v", method, path, err)
	}
	if err := json.Unmarshal(again, &ours); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(sent, ours) {
		t.Fatalf("%s %s: %T encodes differently from the server\nserver: %s\nours:   %s", method, path, out, raw, again)
	}
}

package traces_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/clock"
	"github.com/lethe-mq/lethe/internal/pgtest"
	"github.com/lethe-mq/lethe/internal/testserver"
	"github.com/lethe-mq/lethe/internal/traces"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var t0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

type bundle struct {
	srv *testserver.Server
	clk *clock.Fake
}

func setup(t *testing.T) *bundle {
	t.Helper()
	clk := clock.NewFake(t0)
	return &bundle{srv: testserver.Start(t, testserver.Options{Clock: clk}), clk: clk}
}

// call sends body as JSON and decodes the answer into out, answering the
// status.
func (b *bundle) call(t *testing.T, method, path string, body any, out any) int {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, ok := body.(string)
		if !ok {
			buf, _ := json.Marshal(body)
			raw = string(buf)
		}
		rd = bytes.NewReader([]byte(raw))
	}
	req, _ := http.NewRequest(method, b.srv.URL+path, rd)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(got, out); err != nil {
			t.Fatalf("%s %s answered %d %q: %v", method, path, resp.StatusCode, got, err)
		}
	}
	return resp.StatusCode
}

// pushed pushes one message and answers its partition id.
func (b *bundle) pushed(t *testing.T, queue, txn string, payload string) string {
	t.Helper()
	var res []api.PushResult
	body := `{"items":[{"queue":"` + queue + `","transactionId":"` + txn + `","payload":` + payload + `}]}`
	if got := b.call(t, http.MethodPost, "/api/v1/push", body, &res); got != http.StatusCreated || len(res) != 1 {
		t.Fatalf("push answered %d %+v", got, res)
	}
	return res[0].PartitionID
}

// Traces are recorded against a message (201 with an id) and read back per
// message, by name (with the message's queue, partition and payload) and
// as a list of names, in Queen's shapes.
func TestTracesAreRecordedAndReadInQueensShapes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	pid := b.pushed(t, "orders", "t1", `{"order":1}`)
	var rec api.TraceRecorded
	if got := b.call(t, http.MethodPost, "/api/v1/traces", map[string]any{"transactionId": "t1", "partitionId": pid,
		"data": map[string]any{"step": "charged"}, "traceNames": "order-1", "eventType": "step"}, &rec); got != http.StatusCreated || !rec.Success || rec.TraceID == "" {
		t.Fatalf("record answered %d %+v", got, rec)
	}
	b.clk.Set(t0.Add(time.Second))
	if got := b.call(t, http.MethodPost, "/api/v1/traces", map[string]any{"transactionId": "t1", "partitionId": pid,
		"consumerGroup": "billing", "data": 2, "traceNames": []string{"order-1", "tenant-a", "order-1"}}, &rec); got != http.StatusCreated {
		t.Fatalf("second record answered %d", got)
	}
	var msg api.MessageTraces
	b.call(t, http.MethodGet, "/api/v1/traces/"+pid+"/t1", nil, &msg)
	if len(msg.Traces) != 2 || msg.Traces[0].EventType != "step" || msg.Traces[0].ConsumerGroup != api.QueueModeGroup ||
		msg.Traces[1].EventType != "info" || msg.Traces[1].ConsumerGroup != "billing" ||
		msg.Traces[0].CreatedAt != "2030-01-02T03:04:05.000Z" || len(msg.Traces[1].TraceNames) != 2 {
		t.Fatalf("traces of the message: %+v", msg.Traces)
	}
	var named api.TracesByName
	b.call(t, http.MethodGet, "/api/v1/traces/by-name/order-1?limit=1&offset=1", nil, &named)
	if named.Total != 2 || len(named.Traces) != 1 || named.Pagination.Limit != 1 || named.Pagination.Offset != 1 ||
		string(named.Traces[0].MessagePayload) != `{"order":1}` || *named.Traces[0].QueueName != "orders" ||
		string(named.Traces[0].Data) != "2" {
		t.Fatalf("traces by name: %+v", named)
	}
	var names api.TraceNames
	b.call(t, http.MethodGet, "/api/v1/traces/names", nil, &names)
	if names.Total != 2 || len(names.TraceNames) != 2 || names.TraceNames[0].TraceCount+names.TraceNames[1].TraceCount != 3 ||
		names.Pagination.Limit != 50 {
		t.Fatalf("trace names: %+v", names)
	}
}

// Bad traces answer 4xx and store nothing.
func TestBadTracesAnswerFourHundreds(t *testing.T) {
	t.Parallel()
	b := setup(t)
	pid := b.pushed(t, "orders", "t1", `1`)
	for _, c := range []struct {
		body   string
		status int
	}{
		{`{"partitionId":"` + pid + `","data":{}}`, 400},
		{`{"transactionId":"t1","partitionId":"nope","data":{}}`, 400},
		{`{"transactionId":"t1","partitionId":"` + pid + `"}`, 400},
		{`{"transactionId":"t1","partitionId":"` + pid + `","data":{},"traceNames":[1]}`, 400},
		{`{"transactionId":"t1","partitionId":"` + pid + `","data":{},"traceNames":["a\u0007"]}`, 400},
		{`{"transactionId":"t1","partitionId":"00000000-0000-0000-0000-000000000009","data":{}}`, 404},
	} {
		var e api.Error
		if got := b.call(t, http.MethodPost, "/api/v1/traces", c.body, &e); got != c.status || e.Error == "" {
			t.Errorf("POST %s: %d %q, want %d with a message", c.body, got, e.Error, c.status)
		}
	}
	var n int
	if err := b.srv.Pool.QueryRow(context.Background(), `SELECT count(*) FROM lethe.traces`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("bad traces stored %d rows (err %v)", n, err)
	}
	if got := b.call(t, http.MethodGet, "/api/v1/traces/names?limit=0", nil, nil); got != http.StatusBadRequest {
		t.Fatalf("limit=0 answered %d, want 400", got)
	}
}

// Traces older than TRACES_RETENTION_DAYS (7) are purged by the retention
// loop on its injected clock, with an audit row; younger ones stay.
func TestOldTracesArePurgedByTheLoop(t *testing.T) {
	t.Parallel()
	b := setup(t)
	pid := b.pushed(t, "orders", "t1", `1`)
	record := func() {
		if got := b.call(t, http.MethodPost, "/api/v1/traces", map[string]any{"transactionId": "t1", "partitionId": pid, "data": 1}, nil); got != 201 {
			t.Fatalf("record answered %d", got)
		}
	}
	record()
	b.clk.Set(t0.AddDate(0, 0, 3))
	record()
	b.clk.Set(t0.AddDate(0, 0, 7).Add(time.Second))
	res, err := b.srv.Retention.RunCycle(context.Background())
	if err != nil || res.Reclaimed[traces.RuleRetention] != 1 {
		t.Fatalf("cycle: %v, reclaimed %v; want the one trace older than 7 days", err, res.Reclaimed)
	}
	var msg api.MessageTraces
	b.call(t, http.MethodGet, "/api/v1/traces/"+pid+"/t1", nil, &msg)
	if len(msg.Traces) != 1 || msg.Traces[0].CreatedAt != t0.AddDate(0, 0, 3).Format("2006-01-02T15:04:05.000Z") {
		t.Fatalf("traces left: %+v, want the 3-day-old one", msg.Traces)
	}
	var audited int
	if err := b.srv.Pool.QueryRow(context.Background(), `SELECT sum(rows) FROM lethe.reclaim_history WHERE rule = $1`,
		traces.RuleRetention).Scan(&audited); err != nil || audited != 1 {
		t.Fatalf("audit rows account for %d traces (err %v), want 1", audited, err)
	}
}

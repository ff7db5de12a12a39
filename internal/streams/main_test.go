package streams_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/clock"
	"github.com/lethe-mq/lethe/internal/config"
	"github.com/lethe-mq/lethe/internal/pgtest"
	"github.com/lethe-mq/lethe/internal/testserver"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// t0 is the fake clock's start.
var t0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// bundle is a replica with a fake clock, the system under test.
type bundle struct {
	srv *testserver.Server
	clk *clock.Fake
	// token, when set, is sent as the bearer token of every call.
	token string
}

// setup starts a replica whose retention loop does not run by itself: tests
// run its cycles with RunCycle. batch is RETENTION_BATCH_SIZE (0: default).
func setup(t *testing.T, batch int) *bundle {
	t.Helper()
	return setupWith(t, testserver.Options{Config: func(c *config.Server) {
		if batch > 0 {
			c.Retention.BatchSize = batch
		}
	}})
}

// setupWith is setup with the replica's options (its clock is the fake).
func setupWith(t *testing.T, opts testserver.Options) *bundle {
	t.Helper()
	clk := clock.NewFake(t0)
	opts.Clock = clk
	return &bundle{srv: testserver.Start(t, opts), clk: clk}
}

// call sends a JSON request and decodes the JSON answer into out (when not
// nil), answering the status.
func (b *bundle) call(t *testing.T, method, path string, body any, out any) int {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, ok := body.(string)
		if !ok {
			buf, err := json.Marshal(body)
			if err != nil {
				t.Fatal(err)
			}
			raw = string(buf)
		}
		rd = bytes.NewReader([]byte(raw))
	}
	req, err := http.NewRequest(method, b.srv.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if b.token != "" {
		req.Header.Set("Authorization", "Bearer "+b.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if out != nil && len(got) > 0 {
		if err := json.Unmarshal(got, out); err != nil {
			t.Fatalf("%s %s answered %d %q: %v", method, path, resp.StatusCode, got, err)
		}
	}
	return resp.StatusCode
}

// must is call that fails the test unless the status is want.
func (b *bundle) must(t *testing.T, want int, method, path string, body any, out any) {
	t.Helper()
	var raw json.RawMessage
	if got := b.call(t, method, path, body, &raw); got != want {
		t.Fatalf("%s %s: status %d, want %d; body %s", method, path, got, want, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: decode %s: %v", method, path, raw, err)
		}
	}
}

// popped is the part of a pop answer the tests read.
type popped struct {
	Messages []struct {
		TransactionID string          `json:"transactionId"`
		PartitionID   string          `json:"partitionId"`
		LeaseID       string          `json:"leaseId"`
		Data          json.RawMessage `json:"data"`
	} `json:"messages"`
}

// pop pops from queue/partition for group; 204 answers no messages.
func (b *bundle) pop(t *testing.T, queue, partition, group string, batch int) popped {
	t.Helper()
	var p popped
	path := "/api/v1/pop/queue/" + queue + "/partition/" + partition + "?batch=" + strconv.Itoa(batch)
	if group != "" {
		path += "&consumerGroup=" + group
	}
	status := b.call(t, http.MethodGet, path, nil, &p)
	if status != http.StatusOK && status != http.StatusNoContent {
		t.Fatalf("pop %s: status %d", path, status)
	}
	return p
}

// push pushes payloads to queue/partition with the given transaction ids.
func (b *bundle) push(t *testing.T, queue, partition string, txnIDs ...string) {
	t.Helper()
	var items []map[string]any
	for i, id := range txnIDs {
		items = append(items, map[string]any{"queue": queue, "partition": partition, "transactionId": id, "payload": map[string]int{"n": i}})
	}
	b.must(t, http.StatusCreated, http.MethodPost, "/api/v1/push", map[string]any{"items": items}, nil)
}

// partitionID is the id of queue/partition, made by pushing one message
// to it (transaction id "seed", so asking again pushes nothing new).
func partitionID(t *testing.T, b *bundle, queue, partition string) string {
	t.Helper()
	var res []api.PushResult
	b.must(t, http.StatusCreated, http.MethodPost, "/api/v1/push", map[string]any{"items": []map[string]any{
		{"queue": queue, "partition": partition, "transactionId": "seed", "payload": 0}}}, &res)
	if len(res) != 1 || res[0].PartitionID == "" {
		t.Fatalf("push to %s/%s answered %+v, want one result with its partition_id", queue, partition, res)
	}
	return res[0].PartitionID
}

// queue creates queue (a configure that names no option).
func (b *bundle) queue(t *testing.T, queue string) {
	t.Helper()
	b.must(t, http.StatusOK, http.MethodPost, "/api/v1/configure", map[string]any{"queue": queue}, nil)
}

package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/clock"
	"github.com/lethe-mq/lethe/internal/config"
	"github.com/lethe-mq/lethe/internal/testserver"
)

// coreT0 is where every test's fake clock starts.
var coreT0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// coreReplica is a running lethe with a fake clock, spoken to over HTTP.
type coreReplica struct {
	t     *testing.T
	srv   *testserver.Server
	url   string
	clock *clock.Fake
}

func startCoreReplica(t *testing.T, cfg func(*config.Server)) *coreReplica {
	t.Helper()
	clk := clock.NewFake(coreT0)
	s := testserver.Start(t, testserver.Options{Clock: clk, Config: cfg})
	return &coreReplica{t: t, srv: s, url: s.URL, clock: clk}
}

// coreResult is a response with its body read.
type coreResult struct {
	status int
	header http.Header
	body   []byte
}

// do sends body (raw, "" for none) and reads the whole answer.
func (r *coreReplica) do(method, path, body string) coreResult {
	r.t.Helper()
	return coreDo(r.t, method, r.url+path, body)
}

func coreDo(t *testing.T, method, url, body string) coreResult {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, url, err)
	}
	return coreResult{resp.StatusCode, resp.Header, b}
}

// call requires status and decodes the body into out (when not nil).
func (r *coreReplica) call(method, path, body string, status int, out any) {
	r.t.Helper()
	res := r.do(method, path, body)
	if res.status != status {
		r.t.Fatalf("%s %s %s: status %d %s, want %d", method, path, coreClip(body), res.status, res.body, status)
	}
	if out != nil {
		if err := json.Unmarshal(res.body, out); err != nil {
			r.t.Fatalf("%s %s: decode %s: %v", method, path, res.body, err)
		}
	}
}

func coreClip(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

func coreJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// push posts items and returns the results (201 required).
func (r *coreReplica) push(items ...api.PushItem) []api.PushResult {
	r.t.Helper()
	var res []api.PushResult
	r.call("POST", "/api/v1/push", coreJSON(api.PushRequest{Items: items}), http.StatusCreated, &res)
	return res
}

// pop GETs path (with its query) and returns the messages; 204 is none.
func (r *coreReplica) pop(path string) *api.PopResponse {
	r.t.Helper()
	res := r.do("GET", path, "")
	switch res.status {
	case http.StatusNoContent:
		if len(res.body) != 0 {
			r.t.Errorf("GET %s: 204 with a body %q", path, res.body)
		}
		return &api.PopResponse{}
	case http.StatusOK:
		var resp api.PopResponse
		if err := json.Unmarshal(res.body, &resp); err != nil {
			r.t.Fatalf("GET %s: decode %s: %v", path, res.body, err)
		}
		if len(resp.Messages) == 0 {
			r.t.Errorf("GET %s: 200 with no messages; an empty pop is 204", path)
		}
		return &resp
	}
	r.t.Fatalf("GET %s: status %d %s", path, res.status, res.body)
	return nil
}

func (r *coreReplica) ack(req api.AckRequest) api.AckResult {
	r.t.Helper()
	var res api.AckResult
	r.call("POST", "/api/v1/ack", coreJSON(req), http.StatusOK, &res)
	return res
}

func (r *coreReplica) count(sql string, args ...any) int64 {
	r.t.Helper()
	var n int64
	if err := r.srv.Pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		r.t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// rowCounts counts the rows of every core table, to prove a rejected
// request wrote nothing.
func (r *coreReplica) rowCounts() map[string]int64 {
	r.t.Helper()
	out := map[string]int64{}
	for _, table := range []string{"queues", "partitions", "segments", "txns", "subscriptions", "cursors", "dead_letters"} {
		out[table] = r.count("SELECT count(*) FROM lethe." + table)
	}
	return out
}

func coreSameCounts(t *testing.T, what string, before, after map[string]int64) {
	t.Helper()
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s: lethe.%s has %d rows, want %d (nothing should have been written)", what, k, after[k], v)
		}
	}
}

// requireCoreError checks a 4xx answer carries {"error": "<something>"}.
func requireCoreError(t *testing.T, what string, res coreResult, status int) {
	t.Helper()
	if res.status != status {
		t.Errorf("%s: status %d %s, want %d", what, res.status, coreClip(string(res.body)), status)
		return
	}
	if ct := res.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("%s: Content-Type %q, want JSON", what, ct)
	}
	var e api.Error
	if err := json.Unmarshal(res.body, &e); err != nil || strings.TrimSpace(e.Error) == "" {
		t.Errorf("%s: body %s is not {\"error\": \"...\"} (%v)", what, res.body, err)
	}
}

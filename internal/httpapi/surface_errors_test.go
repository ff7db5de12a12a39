package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/config"
	"github.com/lethe-mq/lethe/internal/pgtest"
	"github.com/lethe-mq/lethe/internal/testkit"
)

// A wrong method on a path lethe serves answers 405 with Allow; a path it
// does not serve answers 404; both in JSON, with a request id.
func TestWrongMethodIs405UnknownPathIs404(t *testing.T) {
	t.Parallel()
	r := startCoreReplica(t, nil)
	for _, c := range []struct {
		method, path, allow string
	}{
		{"GET", "/api/v1/push", "POST"},
		{"PUT", "/api/v1/ack", "POST"},
		{"DELETE", "/api/v1/configure", "POST"},
		{"POST", "/api/v1/pop/queue/q", "GET, HEAD"},
		{"PATCH", "/api/v1/resources/queues/q", "DELETE, GET, HEAD"},
		{"POST", "/health", "GET, HEAD"},
		{"GET", "/api/v1/dlq/1/replay", "POST"},
	} {
		res := r.do(c.method, c.path, "")
		requireCoreError(t, c.method+" "+c.path, res, http.StatusMethodNotAllowed)
		if got := res.header.Get("Allow"); got != c.allow {
			t.Errorf("%s %s: Allow %q, want %q", c.method, c.path, got, c.allow)
		}
	}
	for _, p := range []string{"/nope", "/dashboard/nope.js", "/api/v1/nothing", "/api/v2/push", "/api/v1/pop/queue/", "/api/v1/pop/queue/q/extra"} {
		requireCoreError(t, "GET "+p, r.do("GET", p, ""), http.StatusNotFound)
	}
}

// Every answer carries X-Request-Id; an error body repeats it; a caller's
// own short id is kept, anything else replaced.
func TestEveryAnswerHasARequestID(t *testing.T) {
	t.Parallel()
	r := startCoreReplica(t, nil)
	seen := map[string]bool{}
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/health", ""}, {"GET", "/nope", ""}, {"POST", "/api/v1/push", `{"items":[{"queue":"q"}]}`},
		{"POST", "/api/v1/push", `{`}, {"GET", "/metrics", ""}, {"GET", "/api/v1/pop/queue/q", ""},
	} {
		res := r.do(c.method, c.path, c.body)
		id := res.header.Get("X-Request-Id")
		if id == "" || seen[id] {
			t.Errorf("%s %s: X-Request-Id %q (empty or repeated)", c.method, c.path, id)
		}
		seen[id] = true
		if res.status >= 400 {
			var e api.Error
			if json.Unmarshal(res.body, &e) != nil || e.RequestID != id {
				t.Errorf("%s %s: body %s does not repeat request id %s", c.method, c.path, res.body, id)
			}
		}
	}
	for given, kept := range map[string]bool{"trace-42.a_b": true, strings.Repeat("x", 65): false, "no spaces": false} {
		req, _ := http.NewRequest("GET", r.url+"/nope", nil)
		req.Header.Set("X-Request-Id", given)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("X-Request-Id"); (got == given) != kept || got == "" {
			t.Errorf("caller's id %q answered as %q; kept=%v expected", given, got, kept)
		}
	}
}

// While the database refuses connections every route that needs it answers
// 503 with Retry-After and a body without SQL, hosts, users or database
// names; when it is back, requests work again.
func TestDatabaseUnavailableIs503(t *testing.T) {
	t.Parallel()
	r := startCoreReplica(t, nil)
	res := r.push(api.PushItem{Queue: "down", Payload: json.RawMessage(`1`)})
	cfg, err := pgx.ParseConfig(r.srv.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	allow := refuseConnections(t, cfg.Database)
	leaks := []string{cfg.Database, cfg.User, cfg.Host, "SQLSTATE", "SELECT", "INSERT", "lethe.", "failed to connect", "dial"}
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/api/v1/push", `{"items":[{"queue":"down","payload":2}]}`},
		{"GET", "/api/v1/pop/queue/down?consumerGroup=g", ""},
		{"POST", "/api/v1/ack", `{"transactionId":"` + res[0].TransactionID + `","partitionId":"` + res[0].PartitionID + `"}`},
		{"POST", "/api/v1/configure", `{"queue":"down","options":{"leaseTime":60}}`},
		{"GET", "/api/v1/resources/queues", ""},
		{"GET", "/api/v1/status/queues/down", ""},
		{"GET", "/api/v1/retention/status", ""},
		{"GET", "/api/v1/dlq", ""},
		{"GET", "/ready", ""},
	} {
		got := r.do(c.method, c.path, c.body)
		if got.status != http.StatusServiceUnavailable || got.header.Get("Retry-After") == "" {
			t.Errorf("%s %s with the database refusing: %d (Retry-After %q) %s, want 503 with Retry-After",
				c.method, c.path, got.status, got.header.Get("Retry-After"), got.body)
		}
		for _, leak := range leaks {
			if leak != "" && strings.Contains(string(got.body), leak) {
				t.Errorf("%s %s: body %s reveals %q", c.method, c.path, got.body, leak)
			}
		}
	}
	if got := r.do("GET", "/health", ""); got.status != http.StatusOK {
		t.Errorf("GET /health with the database refusing: %d %s, want 200 (liveness needs no database)", got.status, got.body)
	}
	allow()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := r.do("POST", "/api/v1/push", `{"items":[{"queue":"down","payload":3}]}`)
		if got.status == http.StatusCreated {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("push after the database came back: %d %s", got.status, got.body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// refuseConnections makes database db refuse new connections and ends its
// sessions; the returned func lets connections in again (also run when
// the test ends).
func refuseConnections(t *testing.T, db string) (allow func()) {
	t.Helper()
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, pgtest.AdminConnString())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close(ctx) }) // after the cleanup below, which uses it
	set := func(allow bool) {
		t.Helper()
		sql := fmt.Sprintf("ALTER DATABASE %s ALLOW_CONNECTIONS %t", pgx.Identifier{db}.Sanitize(), allow)
		if _, err := admin.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	set(false)
	t.Cleanup(func() { set(true) })
	if _, err := admin.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1`, db); err != nil {
		t.Fatal(err)
	}
	return func() { set(true) }
}

// Beyond LETHE_MAX_LONG_POLLS waiting pops, a pop with wait=true answers
// 503 at once; pops without wait still work; the waiters are served.
func TestLongPollsAreBounded(t *testing.T) {
	t.Parallel()
	r := startCoreReplica(t, func(c *config.Server) { c.MaxLongPolls = 2 })
	done := make(chan coreResult, 2)
	for _, g := range []string{"g1", "g2"} {
		go func() {
			done <- coreDo(t, "GET", r.url+"/api/v1/pop/queue/lp?wait=true&timeout=30000&consumerGroup="+g, "")
		}()
	}
	waitFor(t, "two long polls waiting", func() bool { return r.srv.Server.LongPolls() == 2 })
	third := r.do("GET", "/api/v1/pop/queue/lp?wait=true&timeout=30000&consumerGroup=g3", "")
	requireCoreError(t, "a third long poll", third, http.StatusServiceUnavailable)
	if got := third.header.Get("Retry-After"); got != "1" {
		t.Errorf("Retry-After %q, want 1", got)
	}
	if res := r.do("GET", "/api/v1/pop/queue/lp?consumerGroup=g3", ""); res.status != http.StatusNoContent {
		t.Errorf("a pop without wait at the bound: %d %s, want 204", res.status, res.body)
	}
	r.push(api.PushItem{Queue: "lp", Payload: json.RawMessage(`"wake"`)})
	for range 2 {
		if res := <-done; res.status != http.StatusOK {
			t.Errorf("a waiting long poll: %d %s, want 200", res.status, res.body)
		}
	}
	waitFor(t, "no long poll waiting", func() bool { return r.srv.Server.LongPolls() == 0 })
	if res := r.do("GET", "/api/v1/pop/queue/lp?wait=true&timeout=50&consumerGroup=g3", ""); res.status != http.StatusOK {
		t.Errorf("a long poll after the others left: %d %s, want 200 (the message)", res.status, res.body)
	}
}

// waitFor polls cond until it holds, for at most ten seconds.
var waitFor = testkit.Eventually

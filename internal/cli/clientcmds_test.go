package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/client"
	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/config"
	"github.com/lethe-mq/lethe/internal/testserver"
)

// lethe runs the CLI in-process with args and stdin, as a user would.
func lethe(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	root := NewRoot(&out, &errOut)
	root.SetArgs(args)
	root.SetIn(strings.NewReader(stdin))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := root.ExecuteContext(ctx)
	return out.String(), err
}

// mustLethe is lethe for commands that must succeed.
func mustLethe(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	out, err := lethe(t, stdin, args...)
	if err != nil {
		t.Fatalf("lethe %s: %v\noutput:\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func decode[T any](t *testing.T, out string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("--json output is not the expected JSON: %v\n%s", err, out)
	}
	return v
}

func wantContains(t *testing.T, out string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(out, p) {
			t.Fatalf("output lacks %q:\n%s", p, out)
		}
	}
}

func TestPushPopAckHuman(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	s := "--server=" + srv.URL

	out := mustLethe(t, "", "push", "orders", s, "--data", `{"id":1}`, "--txn", "order-1")
	wantContains(t, out, "STATUS", "queued", "order-1", "pushed 1 message to orders: 1 queued")

	out = mustLethe(t, "", "pop", "orders", s)
	wantContains(t, out, "PARTITION-ID", "TRANSACTION-ID", "LEASE-ID", "Default", "order-1", `{"id":1}`, "ack with: lethe ack --partition-id ")
	// Run the hint exactly as printed.
	hint := out[strings.Index(out, "ack with: ")+len("ack with: lethe "):]
	args := append(strings.Fields(strings.TrimSpace(hint)), s)
	out = mustLethe(t, "", args...)
	wantContains(t, out, "acked order-1 as completed; lease released")

	out = mustLethe(t, "", "pop", "orders", s)
	wantContains(t, out, "no messages available in orders")
}

func TestPushPopAckJSON(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	s := "--server=" + srv.URL

	out := mustLethe(t, "{\"n\":1}\n\n{\"n\":2}\n\"three\"\n", "push", "jobs", s, "--partition", "p1", "--json")
	pushed := decode[[]api.PushResult](t, out)
	if len(pushed) != 3 || pushed[2].Status != api.StatusQueued || pushed[2].Index != 2 {
		t.Fatalf("pushed %+v, want 3 queued", pushed)
	}

	out = mustLethe(t, "", "pop", "jobs", s, "--batch", "10", "--group", "g1", "--json")
	msgs := decode[[]api.Message](t, out)
	if len(msgs) != 3 || string(msgs[2].Data) != `"three"` || msgs[0].Partition != "p1" || msgs[0].LeaseID == "" {
		t.Fatalf("popped %+v, want the 3 messages of p1 under a lease", msgs)
	}
	for i, m := range msgs {
		status := api.AckCompleted
		if i == 2 {
			status = api.AckFailed
		}
		out = mustLethe(t, "", "ack", s, "--json", "--partition-id", m.PartitionID, "--txn", m.TransactionID,
			"--lease", m.LeaseID, "--group", "g1", "--status", status)
		res := decode[api.AckResult](t, out)
		if !res.Success || res.LeaseReleased != (i == 2) {
			t.Fatalf("ack %d: %+v", i, res)
		}
	}
	// The failed one comes back to the group.
	out = mustLethe(t, "", "pop", "jobs", s, "--group", "g1", "--json", "--wait", "--timeout", "2000")
	again := decode[[]api.Message](t, out)
	if len(again) != 1 || again[0].TransactionID != msgs[2].TransactionID || again[0].RetryCount != 1 {
		t.Fatalf("after a failed ack, popped %+v, want the failed message again", again)
	}

	out = mustLethe(t, "", "pop", "jobs", s, "--group", "g2", "--auto-ack", "--json", "--batch", "10")
	if got := decode[[]api.Message](t, out); len(got) != 3 {
		t.Fatalf("a second group popped %d messages, want all 3", len(got))
	}
	out = mustLethe(t, "", "pop", "jobs", s, "--group", "g2", "--json")
	if strings.TrimSpace(out) != "[]" {
		t.Fatalf("empty pop --json printed %q, want []", out)
	}
}

func TestPushFromFileAndDedup(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	s := "--server=" + srv.URL
	dir := t.TempDir()
	pretty := filepath.Join(dir, "one.json")
	if err := os.WriteFile(pretty, []byte("{\n  \"id\": 7,\n  \"tags\": [\"a\"]\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	lines := filepath.Join(dir, "many.jsonl")
	if err := os.WriteFile(lines, []byte("1\n2\n3\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	out := mustLethe(t, "", "push", "files", s, "--file", pretty)
	wantContains(t, out, "pushed 1 message to files: 1 queued")
	out = mustLethe(t, "", "push", "files", s, "-f", lines)
	wantContains(t, out, "pushed 3 messages to files: 3 queued")

	mustLethe(t, "", "push", "files", s, "--txn", "once", "--data", "1")
	out = mustLethe(t, "", "push", "files", s, "--txn", "once", "--data", "1")
	wantContains(t, out, "pushed 1 message to files: 1 duplicate")

	out = mustLethe(t, "", "queue", "show", "files", s, "--json")
	if q := decode[client.Queue](t, out); q.Messages != 5 {
		t.Fatalf("queue holds %d messages, want 5 (the duplicate is not stored)", q.Messages)
	}
}

func TestQueueCommands(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	s := "--server=" + srv.URL

	out := mustLethe(t, "", "queue", "list", s)
	wantContains(t, out, "no queues yet")

	out = mustLethe(t, "", "queue", "configure", "billing", s, "--lease-time", "60", "--retention-enabled")
	wantContains(t, out, "queue billing is configured (2 options changed)", "lease-time", "60", "retention-enabled")
	// Only the flags given are sent: leaseTime stays 60.
	out = mustLethe(t, "", "queue", "configure", "billing", s, "--retry-limit", "5", "--json")
	cfg := decode[api.ConfigureResponse](t, out)
	if cfg.Options.LeaseTime != 60 || cfg.Options.RetryLimit != 5 || !cfg.Options.RetentionEnabled {
		t.Fatalf("after configuring only --retry-limit, options are %+v", cfg.Options)
	}

	out = mustLethe(t, "", "queue", "list", s)
	wantContains(t, out, "NAME", "LEASE-TIME", "billing", "60s")
	out = mustLethe(t, "", "queue", "list", s, "--json")
	if qs := decode[[]client.Queue](t, out); len(qs) != 1 || qs[0].Options.RetryLimit != 5 {
		t.Fatalf("queue list --json = %+v", qs)
	}
	out = mustLethe(t, "", "queue", "show", "billing", s)
	wantContains(t, out, "queue       billing", "options:", "retry-limit")

	_, err := lethe(t, "", "queue", "delete", "billing", s)
	if err == nil || !strings.Contains(err.Error(), "add --yes") {
		t.Fatalf("delete without --yes: %v, want a refusal naming --yes", err)
	}
	mustLethe(t, "", "queue", "show", "billing", s) // still there
	out = mustLethe(t, "", "queue", "delete", "billing", s, "--yes")
	wantContains(t, out, "deleted queue billing")
	_, err = lethe(t, "", "queue", "show", "billing", s)
	if err == nil || !strings.Contains(err.Error(), "does not exist: see `lethe queue list`") {
		t.Fatalf("show after delete: %v", err)
	}
}

func TestStatus(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	s := "--server=" + srv.URL
	mustLethe(t, "", "push", "st", s, "--data", "1")

	out := mustLethe(t, "", "status", s)
	wantContains(t, out, "lethe at "+srv.URL)
	out = mustLethe(t, "", "status", s, "--json")
	if st := decode[api.Status](t, out); st.Queues != 1 || st.Messages.Total != 1 || st.Version == "" {
		t.Fatalf("status --json = %+v, want 1 queue holding 1 message", st)
	}
	wantContains(t, mustLethe(t, "", "status", s), "queues          1 (1 partitions", "messages        1 stored")

	// A server without /api/v1/status: health and queues instead.
	upstream, _ := url.Parse(srv.URL)
	proxy := httputil.NewSingleHostReverseProxy(upstream)
	old := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/v1/status":
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"error":"no route"}`))
			return
		case "/health": // as Queen answers it
			w.Write([]byte(`{"status":"healthy","database":"connected","server":"queen"}`))
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	defer old.Close()
	out = mustLethe(t, "", "status", "--server", old.URL)
	wantContains(t, out, "healthy, database connected", "1 queue, 1 message", "st")
	out = mustLethe(t, "", "status", "--server", old.URL, "--json")
	basic := decode[basicStatus](t, out)
	if basic.Health == nil || basic.Health.Status != "healthy" || len(basic.Queues) != 1 {
		t.Fatalf("fallback status --json = %+v", basic)
	}
}

func TestBadInputSaysWhatToDo(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	s := "--server=" + srv.URL
	cases := []struct {
		stdin string
		args  []string
		want  string
	}{
		{"", []string{"pop", s}, "missing queue name: usage: lethe pop QUEUE"},
		{"", []string{"pop", "q", "extra", s}, "too many arguments"},
		{"", []string{"pop", "q", s, "--batch", "0"}, "--batch must be between 1 and 10000, got 0"},
		{"", []string{"pop", "q", s, "--batch", "abc"}, `invalid argument "abc" for "--batch"`},
		{"", []string{"pop", "q", s, "--timeout", "100"}, "--timeout only applies with --wait"},
		{"", []string{"ack", s, "--txn", "t"}, "--partition-id and --txn are required"},
		{"", []string{"ack", s, "--txn", "t", "--partition-id", "p", "--status", "maybe"}, "--status must be completed, failed or dlq"},
		{"", []string{"ack", s, "--txn", "t", "--partition-id", "p", "--error", "x"}, "use it with --status failed or dlq"},
		{"", []string{"ack", s, "--txn", "t", "--partition-id", "not-a-uuid"}, "the ack was not applied: partitionId"},
		{"", []string{"push", "q", s, "--data", "{"}, "--data is not valid JSON"},
		{"", []string{"push", "q", s, "--data", "1", "--file", "x"}, "not both"},
		{"", []string{"push", "q", s, "--file", "/nonexistent/x.json"}, "--file: open /nonexistent/x.json"},
		{"", []string{"push", "q", s}, "stdin holds no message"},
		{"1\n{oops\n", []string{"push", "q", s}, "stdin line 2 is not valid JSON"},
		{"1\n2\n", []string{"push", "q", s, "--txn", "t"}, "--txn names one message, but 2 were given"},
		{"", []string{"queue", "configure", "q", s, "--lease-time", "-1"}, "--lease-time must be 0 or more"},
		{"", []string{"queue", "configure", "q", s, "--lease-time", "0"}, "options.leaseTime must be between 1"},
		{"", []string{"queue", "delete", "q", s}, "not deleting queue q"},
		{"", []string{"status", "--server", "localhost:6632"}, "want http://host:port"},
	}
	for _, tc := range cases {
		_, err := lethe(t, tc.stdin, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("lethe %s: error %v, want it to say %q", strings.Join(tc.args, " "), err, tc.want)
		}
	}
}

func TestUnreachableServerSaysWhatToDo(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := "http://" + ln.Addr().String()
	ln.Close()
	for _, args := range [][]string{{"status"}, {"queue", "list"}, {"pop", "q"}, {"push", "q", "--data", "1"}} {
		_, err := lethe(t, "", append(args, "--server", addr)...)
		want := "cannot reach lethe at " + addr + ": is `lethe serve` running? set --server or LETHE_URL"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("lethe %v: %v, want %q", args, err, want)
		}
	}
}

func TestTokenFlag(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{Config: func(c *config.Server) {
		c.AuthToken, c.OperatorToken = "user-token", "op-token"
	}})
	s := "--server=" + srv.URL
	_, err := lethe(t, "", "queue", "list", s)
	if err == nil || !strings.Contains(err.Error(), "pass --token or set LETHE_TOKEN") {
		t.Fatalf("without a token: %v", err)
	}
	mustLethe(t, "", "queue", "configure", "secured", s, "--token", "user-token")
	_, err = lethe(t, "", "queue", "delete", "secured", "--yes", s, "--token", "user-token")
	if err == nil || !strings.Contains(err.Error(), "operator token") {
		t.Fatalf("delete with the user token: %v, want a refusal naming the operator token", err)
	}
	mustLethe(t, "", "queue", "delete", "secured", "--yes", s, "--token", "op-token")
}

func TestServerAndTokenFromEnvironment(t *testing.T) {
	t.Parallel()
	env := map[string]string{"LETHE_URL": "http://env:1", "LETHE_TOKEN": "env-token"}
	getenv := func(k string) string { return env[k] }

	f := clientFlags{}
	if err := f.resolve(getenv); err != nil || f.server != "http://env:1" || f.token != "env-token" {
		t.Fatalf("from env: %+v, %v", f, err)
	}
	f = clientFlags{server: "http://flag:2", token: "flag-token"}
	if err := f.resolve(getenv); err != nil || f.server != "http://flag:2" || f.token != "flag-token" {
		t.Fatalf("flags must win over env: %+v, %v", f, err)
	}
	f = clientFlags{}
	if err := f.resolve(func(string) string { return "" }); err != nil || f.server != DefaultServerURL || f.token != "" {
		t.Fatalf("defaults: %+v, %v", f, err)
	}
}

package faults_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/testserver"
)

// badRequest is one malformed request of the corpus. want is the exact
// status expected, or 0 for any 4xx.
type badRequest struct {
	name, method, path, body string
	want                     int
}

// answer is a response with its body read.
type answer struct {
	status int
	header http.Header
	body   []byte
}

func send(t *testing.T, base string, c badRequest) answer {
	t.Helper()
	return sendAs(t, base, c, "")
}

// sendAs is send with a bearer token ("" for none).
func sendAs(t *testing.T, base string, c badRequest, token string) answer {
	t.Helper()
	var rd io.Reader
	if c.body != "" {
		rd = strings.NewReader(c.body)
	}
	req, err := http.NewRequestWithContext(context.Background(), c.method, base+c.path, rd)
	if err != nil {
		t.Fatalf("%s: build request: %v", c.name, err)
	}
	if c.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %s %s: %v", c.name, c.method, c.path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s: read the answer: %v", c.name, err)
	}
	return answer{resp.StatusCode, resp.Header, b}
}

// leakWords must never appear in an error body: SQL, the database's name,
// user and socket.
func leakWords(t *testing.T, dsn string) []string {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return []string{"SELECT ", "INSERT ", "UPDATE ", "DELETE FROM", "SQLSTATE", "lethe.", "pq:", "pgx",
		cfg.Database, "user=" + cfg.User, cfg.Host, "failed to connect", "panic", "goroutine"}
}

// checkAnswer fails t unless a is a 4xx (c.want when set) with a JSON error
// body that reveals nothing of the database.
func checkAnswer(t *testing.T, c badRequest, a answer, leaks []string) {
	t.Helper()
	switch {
	case a.status >= 500:
		t.Errorf("%s: %s %.80s answered %d %s", c.name, c.method, c.path, a.status, a.body)
		return
	case c.want != 0 && a.status != c.want, c.want == 0 && (a.status < 400 || a.status >= 500):
		t.Errorf("%s: %s %.80s answered %d %.200s, want %d (0: any 4xx)", c.name, c.method, c.path, a.status, a.body, c.want)
		return
	}
	var e api.Error
	if !strings.HasPrefix(a.header.Get("Content-Type"), "application/json") ||
		json.Unmarshal(a.body, &e) != nil || strings.TrimSpace(e.Error) == "" || e.RequestID == "" {
		t.Errorf("%s: body %.200s (%s) is not a JSON error with a request id", c.name, a.body, a.header.Get("Content-Type"))
	}
	for _, w := range leaks {
		if w != "" && strings.Contains(string(a.body), w) {
			t.Errorf("%s: body %.200s reveals %q", c.name, a.body, w)
		}
	}
}

// snapshot dumps every row of every table of the lethe schema, to prove a
// refused request wrote nothing.
func snapshot(t *testing.T, conn *pgx.Conn) map[string]string {
	t.Helper()
	ctx := context.Background()
	tables, err := conn.Query(ctx, `SELECT tablename FROM pg_tables WHERE schemaname = 'lethe' ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	names, err := pgx.CollectRows(tables, pgx.RowTo[string])
	if err != nil || len(names) < 8 {
		t.Fatalf("lethe tables: %v (%v)", names, err)
	}
	out := map[string]string{}
	for _, name := range names {
		var rows string
		q := `SELECT coalesce(string_agg(t::text, E'\n' ORDER BY t::text), '') FROM lethe.` + pgx.Identifier{name}.Sanitize() + ` t`
		if err := conn.QueryRow(ctx, q).Scan(&rows); err != nil {
			t.Fatalf("dump lethe.%s: %v", name, err)
		}
		out[name] = rows
	}
	return out
}

// changedTables names the tables whose rows differ.
func changedTables(before, after map[string]string) []string {
	var out []string
	for name, rows := range after {
		if before[name] != rows {
			out = append(out, name)
		}
	}
	return out
}

var docRouteRow = regexp.MustCompile("^\\| `([A-Z]+) (/[^`]*)` \\| [^|]+ \\|$")

// documentedRoutes reads docs/api.md's route table: the server's routes
// (internal/httpapi's TestRouteTableMatchesTheDocs keeps them equal).
func documentedRoutes(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile("../../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	section := false
	for _, line := range strings.Split(string(raw), "\n") {
		switch {
		case line == "### Routes and roles":
			section = true
		case strings.HasPrefix(line, "##"):
			section = false
		case section:
			if m := docRouteRow.FindStringSubmatch(line); m != nil {
				out = append(out, m[1]+" "+m[2])
			}
		}
	}
	if len(out) < 40 {
		t.Fatalf("docs/api.md's route table has %d routes", len(out))
	}
	return out
}

// routeMatcher finds the documented routes whose path a request's path
// matches (any method: a wrong method on a route's path exercises that
// route too).
type routeMatcher []struct {
	route, pattern string
	mux            *http.ServeMux
}

func newRouteMatcher(routes []string) routeMatcher {
	var m routeMatcher
	for _, rt := range routes {
		_, pattern, _ := strings.Cut(rt, " ")
		mux := http.NewServeMux()
		mux.HandleFunc(pattern, func(http.ResponseWriter, *http.Request) {})
		m = append(m, struct {
			route, pattern string
			mux            *http.ServeMux
		}{rt, pattern, mux})
	}
	return m
}

func (m routeMatcher) routesOf(c badRequest) []string {
	path, _, _ := strings.Cut(c.path, "?")
	req, err := http.NewRequest("GET", "http://lethe"+path, nil)
	if err != nil {
		return nil
	}
	var out []string
	for _, r := range m {
		if _, matched := r.mux.Handler(req); matched == r.pattern {
			out = append(out, r.route)
		}
	}
	return out
}

// seed gives the replica data that a careless handler could change: a
// configured queue with messages in two partitions, a group with a lease,
// a streaming query over the queue. It answers the query's query_id.
func seed(t *testing.T, s *testserver.Server) string {
	t.Helper()
	return seedAs(t, s, "")
}

// seedAs is seed with a bearer token (the operator's, on a replica with
// authentication on).
func seedAs(t *testing.T, s *testserver.Server, token string) string {
	t.Helper()
	for _, c := range []badRequest{
		{"configure", "POST", "/api/v1/configure", `{"queue":"seed","options":{"leaseTime":600}}`, http.StatusOK},
		{"push", "POST", "/api/v1/push", `{"items":[{"queue":"seed","partition":"p1","payload":{"n":1},"transactionId":"s1"},` +
			`{"queue":"seed","partition":"p2","payload":{"n":2},"transactionId":"s2"},{"queue":"seed","partition":"p1","payload":3}]}`, http.StatusCreated},
		{"pop", "GET", "/api/v1/pop/queue/seed/partition/p1?consumerGroup=g1", "", http.StatusOK},
	} {
		if a := sendAs(t, s.URL, c, token); a.status != c.want {
			t.Fatalf("seed %s: %d %s", c.name, a.status, a.body)
		}
	}
	reg := badRequest{"register", "POST", "/streams/v1/queries", `{"name":"seed-query","source_queue":"seed","config_hash":"h1"}`, http.StatusOK}
	a := sendAs(t, s.URL, reg, token)
	var q api.StreamQueryResponse
	if a.status != reg.want || json.Unmarshal(a.body, &q) != nil || q.QueryID == "" {
		t.Fatalf("seed %s: %d %s", reg.name, a.status, a.body)
	}
	return q.QueryID
}

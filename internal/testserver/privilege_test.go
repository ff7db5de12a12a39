package testserver

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/client"
	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/config"
	"github.com/lethe-mq/lethe/internal/pgtest"
)

// lethe starts and serves as a role that owns only schema lethe: the
// first install (it runs every migration) and a later start (nothing to
// migrate), with the retention loop running.
func TestServesAsSchemaOwnerOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	role, as := pgtest.NewRole(t, "lethe_app")
	adminDSN := pgtest.NewEmptyDatabase(t)
	admin, err := pgx.Connect(ctx, adminDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "CREATE SCHEMA lethe AUTHORIZATION "+pgx.Identifier{role}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	withRetention := func(c *config.Server) {
		c.Retention.Enabled = true
		c.Retention.Interval = 20 * time.Millisecond
	}
	for i, start := range []string{"first install", "later start"} {
		s := Start(t, Options{DatabaseURL: as(adminDSN), Config: withRetention})
		var user string
		if err := s.Pool.QueryRow(ctx, "SELECT current_user").Scan(&user); err != nil || user != role {
			t.Fatalf("%s: lethe connected as %q (%v), want %s", start, user, err, role)
		}
		roundTrip(t, s, start, i)
		waitRetentionCycle(t, s, start)
		for _, path := range []string{"/api/v1/retention/status", "/api/v1/analytics/postgres-stats", "/api/v1/status"} {
			resp, err := http.Get(s.URL + path)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("%s: GET %s = %d, want 200", start, path, resp.StatusCode)
			}
		}
	}
	var foreign int
	err = admin.QueryRow(ctx, `SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = 'lethe' AND c.relowner <> $1::regrole`, role).Scan(&foreign)
	if err != nil || foreign != 0 {
		t.Errorf("%d relations in schema lethe not owned by %s (%v)", foreign, role, err)
	}
}

// roundTrip pushes, pops and acks one message through s.
func roundTrip(t *testing.T, s *Server, label string, n int) {
	t.Helper()
	ctx := context.Background()
	c, err := client.New(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	want := json.RawMessage(`{"n":` + strconv.Itoa(n) + `}`)
	if _, err := c.Push(ctx, api.PushItem{Queue: "orders", Partition: "p", Payload: want}); err != nil {
		t.Fatalf("%s: push: %v", label, err)
	}
	msgs, err := c.Pop(ctx, "orders", client.PopOptions{Group: "billing"})
	if err != nil || len(msgs) != 1 {
		t.Fatalf("%s: pop: %d messages, %v; want 1", label, len(msgs), err)
	}
	if string(msgs[0].Data) != string(want) {
		t.Errorf("%s: popped %s, want %s", label, msgs[0].Data, want)
	}
	if _, err := c.Ack(ctx, msgs[0], "", ""); err != nil {
		t.Fatalf("%s: ack: %v", label, err)
	}
}

// waitRetentionCycle waits until s's retention loop has finished a cycle
// and fails if any cycle or purge failed.
func waitRetentionCycle(t *testing.T, s *Server, label string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		resp, err := http.Get(s.URL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		m := string(body)
		if strings.Contains(m, `lethe_retention_cycles_total{outcome="failed"}`) ||
			!strings.Contains(m, "lethe_retention_metrics_purge_failures_total 0") {
			t.Fatalf("%s: a retention cycle or purge failed:\n%s", label, grepLines(m, "lethe_retention_"))
		}
		if strings.Contains(m, `lethe_retention_cycles_total{outcome="idle"}`) ||
			strings.Contains(m, `lethe_retention_cycles_total{outcome="swept"}`) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: no retention cycle within 30s:\n%s", label, grepLines(m, "lethe_retention_"))
		}
	}
}

func grepLines(s, prefix string) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(line, prefix) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

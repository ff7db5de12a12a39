package httpapi_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/config"
	"github.com/lethe-mq/lethe/internal/schema"
	"github.com/lethe-mq/lethe/internal/version"
)

func latestMigration(t *testing.T) int {
	t.Helper()
	migs, err := schema.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	return migs[len(migs)-1].Version
}

// /ready compares the applied migrations with the binary's: a missing one
// is 503 naming it, one of a newer lethe is still ready.
func TestReadyComparesMigrations(t *testing.T) {
	t.Parallel()
	r := startCoreReplica(t, nil)
	latest := latestMigration(t)
	var ready api.Ready
	r.call("GET", "/ready", "", http.StatusOK, &ready)
	if ready.Status != "ready" || ready.SchemaVersion != latest || ready.BinarySchemaVersion != latest || ready.Version == "" {
		t.Errorf("GET /ready = %+v, want ready at schema %d with a version", ready, latest)
	}

	if _, err := r.srv.Pool.Exec(t.Context(), "INSERT INTO lethe.schema_migrations (version, name) VALUES (9999, 'newer')"); err != nil {
		t.Fatal(err)
	}
	r.call("GET", "/ready", "", http.StatusOK, &ready)
	if !slices.Equal(ready.UnknownMigrations, []int{9999}) {
		t.Errorf("GET /ready with a newer migration applied: unknownMigrations %v, want [9999]", ready.UnknownMigrations)
	}

	if _, err := r.srv.Pool.Exec(t.Context(), "DELETE FROM lethe.schema_migrations WHERE version = $1", latest); err != nil {
		t.Fatal(err)
	}
	res := r.do("GET", "/ready", "")
	if res.status != http.StatusServiceUnavailable || res.header.Get("Retry-After") == "" {
		t.Fatalf("GET /ready with migration %d missing: %d (Retry-After %q) %s, want 503 with Retry-After",
			latest, res.status, res.header.Get("Retry-After"), res.body)
	}
	if err := json.Unmarshal(res.body, &ready); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ready.MissingMigrations, []int{latest}) || !strings.Contains(ready.Reason, "migrat") {
		t.Errorf("GET /ready with migration %d missing = %+v, want it named with advice", latest, ready)
	}
}

// /ready wants this binary's stored functions: a database that never
// recorded the checksum of its function files is 503, saying so.
func TestReadyWantsTheFunctions(t *testing.T) {
	t.Parallel()
	r := startCoreReplica(t, nil)
	r.call("GET", "/ready", "", http.StatusOK, nil)
	if _, err := r.srv.Pool.Exec(t.Context(), "DELETE FROM lethe.schema_repeatables"); err != nil {
		t.Fatal(err)
	}
	res := r.do("GET", "/ready", "")
	var ready api.Ready
	if err := json.Unmarshal(res.body, &ready); err != nil {
		t.Fatal(err)
	}
	if res.status != http.StatusServiceUnavailable || len(ready.MissingMigrations) != 0 ||
		!strings.Contains(ready.Reason, "stored functions") {
		t.Errorf("GET /ready without the function files' checksum: %d %+v, want 503 naming the stored functions", res.status, ready)
	}
}

// /health is liveness only: with the database gone it still answers 200
// (a liveness probe must not restart lethe for a database outage), with
// the version; /ready answers 503.
func TestHealthNeedsNoDatabase(t *testing.T) {
	t.Parallel()
	r := startCoreReplica(t, nil)
	r.srv.Pool.Close() // every database call fails from here on
	var h api.Health
	r.call("GET", "/health", "", http.StatusOK, &h)
	if h.Status != "healthy" || h.Engine != "lethe" || h.Version != version.String() || h.UptimeSeconds < 0 {
		t.Errorf("GET /health = %+v, want healthy lethe with its version", h)
	}
	res := r.do("GET", "/ready", "")
	if res.status != http.StatusServiceUnavailable || res.header.Get("Retry-After") == "" {
		t.Errorf("GET /ready without a database: %d (Retry-After %q) %s, want 503 with Retry-After",
			res.status, res.header.Get("Retry-After"), res.body)
	}
	var ready api.Ready
	if err := json.Unmarshal(res.body, &ready); err != nil || ready.Database != "unreachable" {
		t.Errorf("GET /ready without a database: body %s, want database unreachable (%v)", res.body, err)
	}
}

// /health says how callers are admitted, and warns when nobody must show a
// credential on any address (LETHE_AUTH=none).
func TestHealthSaysHowCallersAreAdmitted(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		cfg  func(*config.Server)
		auth string
		warn bool
	}{
		{"no credentials", nil, "loopback-only", false},
		{"tokens", func(c *config.Server) { c.AuthToken, c.OperatorToken = "w", "o" }, "credentials", false},
		{"LETHE_AUTH=none", func(c *config.Server) { c.AuthNone = true }, "none", true},
	} {
		r := startCoreReplica(t, tc.cfg)
		var h api.Health
		r.call("GET", "/health", "", http.StatusOK, &h)
		if h.Auth != tc.auth || (h.Warning != "") != tc.warn {
			t.Errorf("%s: GET /health auth %q warning %q; want auth %q, a warning %v", tc.name, h.Auth, h.Warning, tc.auth, tc.warn)
		}
		if tc.warn && !strings.Contains(h.Warning, "operator") {
			t.Errorf("%s: warning %q does not say every caller is an operator", tc.name, h.Warning)
		}
	}
}

package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"

	"github.com/lethe-mq/lethe/internal/auth"
	"github.com/lethe-mq/lethe/internal/config"
	"github.com/lethe-mq/lethe/internal/httpapi"
)

// concretePath fills a route pattern's {params} with plausible values.
func concretePath(pattern string) (method, path string) {
	method, path, _ = strings.Cut(pattern, " ")
	r := strings.NewReplacer("{queue}", "rq", "{group}", "rg", "{partition}", "rp", "{leaseId}", uuid.NewString(),
		"{id}", "1", "{partitionId}", uuid.NewString(), "{transactionId}", "t")
	return method, r.Replace(path)
}

func doWithToken(t *testing.T, method, url, token, body string) coreResult {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return coreResult{resp.StatusCode, resp.Header, b}
}

// testJWTSecret signs the JWTs of these tests (HS256, Queen's JWT_SECRET).
const testJWTSecret = "lethe-test-secret"

// withJWT turns on Queen's JWT authentication (HS256) with its defaults.
func withJWT(c *config.Server) {
	c.JWT = &auth.JWTConfig{Algorithm: auth.AlgHS256, Secret: testJWTSecret, ClockSkew: 30 * time.Second,
		RolesClaim: "role", RolesArrayClaim: "roles", RoleAdmin: "admin", RoleReadWrite: "read-write", RoleReadOnly: "read-only"}
}

// signedJWT is an HS256 token of sub with role, valid at coreT0 for an hour.
func signedJWT(t *testing.T, sub, role string) string {
	t.Helper()
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": sub, "role": role,
		"iat": coreT0.Unix(), "exp": coreT0.Add(time.Hour).Unix()}).SignedString([]byte(testJWTSecret))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// Every route in docs/api.md's table (which is the server's route table)
// refuses callers below its role and lets its role through: the static
// tokens, and JWTs of Queen's three roles.
func TestEveryRouteEnforcesItsRole(t *testing.T) {
	t.Parallel()
	// With the test clock on, so the test-only routes are served too.
	r := startCoreReplica(t, func(c *config.Server) { c.AuthToken, c.OperatorToken, c.TestClock = "plain", "op", true; withJWT(c) })
	tokens := map[string]string{"": "", "plain": "plain", "op": "op", "reader": signedJWT(t, "r", "read-only"),
		"writer": signedJWT(t, "w", "read-write"), "admin": signedJWT(t, "a", "admin")}
	routes := httpapi.DocRoutes(t)
	if len(routes) < 40 {
		t.Fatalf("only %d routes documented", len(routes))
	}
	for _, rt := range routes {
		method, path := concretePath(rt.Pattern)
		body := ""
		if method == "POST" {
			body = `{}`
		}
		refused := func(who string) bool {
			res := doWithToken(t, method, r.url+path, tokens[who], body)
			return res.status == http.StatusUnauthorized || res.status == http.StatusForbidden
		}
		switch rt.Role {
		case "public":
			if refused("") {
				t.Errorf("%s is public but refuses a caller without a token", rt.Pattern)
			}
		case "read":
			expectRefused(t, rt.Pattern, refused, map[string]bool{"": true, "reader": false, "plain": false, "writer": false, "op": false, "admin": false})
		case "write", "write; operator to delete or skip more", "write; operator to reset":
			expectRefused(t, rt.Pattern, refused, map[string]bool{"": true, "reader": true, "plain": false, "writer": false, "op": false, "admin": false})
		case "operator", "operator; test clock only":
			expectRefused(t, rt.Pattern, refused, map[string]bool{"": true, "reader": true, "plain": true, "writer": true, "op": false, "admin": false})
		default:
			t.Errorf("%s: unknown role %q in docs/api.md", rt.Pattern, rt.Role)
		}
	}
}

func expectRefused(t *testing.T, pattern string, refused func(string) bool, want map[string]bool) {
	t.Helper()
	for who, w := range want {
		if got := refused(who); got != w {
			t.Errorf("%s: caller %q refused=%v, want %v", pattern, who, got, w)
		}
	}
}

// configure with the plain token may change anything but what lets
// retention delete more than the queue's current options do.
func TestConfigureNeedsTheOperatorToDeleteMore(t *testing.T) {
	t.Parallel()
	r := startCoreReplica(t, func(c *config.Server) { c.AuthToken, c.OperatorToken = "plain", "op" })
	configure := func(token, options string) int {
		t.Helper()
		res := doWithToken(t, "POST", r.url+"/api/v1/configure", token, `{"queue":"cq","options":`+options+`}`)
		if res.status != http.StatusOK && res.status != http.StatusForbidden {
			t.Fatalf("configure %s: %d %s", options, res.status, res.body)
		}
		return res.status
	}
	for _, c := range []struct {
		token, options string
		want           int
	}{
		{"plain", `{"retentionSeconds":3600}`, 403},       // new queue: set from 0
		{"plain", `{"leaseTime":60,"retryLimit":5}`, 200}, // creates it, deletes nothing
		{"plain", `{"retentionEnabled":true}`, 403},       // turns a rule on
		{"op", `{"retentionEnabled":true,"retentionSeconds":3600,"completedRetentionSeconds":600,"maxWaitTimeSeconds":7200}`, 200},
		{"plain", `{"retentionSeconds":60}`, 403},                    // lowers
		{"plain", `{"retentionSeconds":7200}`, 200},                  // raises: deletes later
		{"plain", `{"completedRetentionSeconds":60}`, 403},           // lowers
		{"plain", `{"completedRetentionSeconds":0}`, 200},            // turns it off
		{"plain", `{"completedRetentionSeconds":600}`, 403},          // set from 0
		{"plain", `{"maxWaitTimeSeconds":9000}`, 403},                // any change
		{"plain", `{"maxWaitTimeSeconds":7200,"leaseTime":30}`, 200}, // the same value
		{"plain", `{"retentionEnabled":false}`, 200},                 // turns it off
		{"op", `{"maxWaitTimeSeconds":1}`, 200},
		{"plain", `{"retentionTier":"1w"}`, 403},       // shorter, and cq holds nothing: it would apply at once
		{"plain", `{"quarantined":"purge"}`, 403},      // dead letters go with their partition
		{"plain", `{"requiredGroups":["audit"]}`, 200}, // owes more
		{"plain", `{"requiredGroups":[]}`, 403},        // audit no longer owed
		{"plain", `{"retentionTier":"forever"}`, 200},  // the same tier
		{"op", `{"retentionTier":"1w","quarantined":"purge","requiredGroups":[]}`, 200},
		{"plain", `{"retentionTier":"3w","quarantined":"keep"}`, 200}, // longer, keeps more
	} {
		if got := configure(c.token, c.options); got != c.want {
			t.Errorf("configure %s with the %s token = %d, want %d", c.options, c.token, got, c.want)
		}
	}
	var q struct {
		Options struct {
			RetentionSeconds, MaxWaitTimeSeconds, LeaseTime int
			RetentionTier                                   string
		}
	}
	res := doWithToken(t, "GET", r.url+"/api/v1/resources/queues/cq", "plain", "")
	if err := json.Unmarshal(res.body, &q); err != nil || q.Options.RetentionSeconds != 7200 || q.Options.MaxWaitTimeSeconds != 1 ||
		q.Options.LeaseTime != 30 || q.Options.RetentionTier != "3w" {
		t.Fatalf("queue after the configures: %s (%v)", res.body, err)
	}
	// A new queue compares with the server's default tier (forever here).
	for _, c := range []struct {
		options string
		want    int
	}{{`{"retentionTier":"7w"}`, 403}, {`{"retentionTier":"forever"}`, 200}} {
		if got := doWithToken(t, "POST", r.url+"/api/v1/configure", "plain", `{"queue":"cq2","options":`+c.options+`}`).status; got != c.want {
			t.Errorf("configure new queue %s with the plain token = %d, want %d", c.options, got, c.want)
		}
	}
}

// A JWT without exp would never expire: by default it answers 401 saying
// so, on any route; with JWT_REQUIRE_EXP=false (AllowNoExpiry) it grants
// its role, and an expired token is still refused.
func TestJWTWithoutExpiryIsRefusedUnlessAllowed(t *testing.T) {
	t.Parallel()
	sign := func(claims jwt.MapClaims) string {
		tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString([]byte(testJWTSecret))
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	forever := sign(jwt.MapClaims{"sub": "w", "role": "read-write", "iat": coreT0.Unix()})
	expired := sign(jwt.MapClaims{"sub": "w", "role": "read-write", "iat": coreT0.Add(-2 * time.Hour).Unix(), "exp": coreT0.Add(-time.Hour).Unix()})
	strict := startCoreReplica(t, withJWT)
	lax := startCoreReplica(t, func(c *config.Server) { withJWT(c); c.JWT.AllowNoExpiry = true })
	for _, path := range []string{"/api/v1/resources/queues", "/api/v1/status"} {
		res := doWithToken(t, "GET", strict.url+path, forever, "")
		var e struct{ Error string }
		if res.status != http.StatusUnauthorized || json.Unmarshal(res.body, &e) != nil || !strings.Contains(e.Error, "no expiry") {
			t.Errorf("GET %s with a JWT without exp: %d %s, want 401 saying it has no expiry", path, res.status, res.body)
		}
		if res := doWithToken(t, "GET", lax.url+path, forever, ""); res.status != http.StatusOK {
			t.Errorf("GET %s with a JWT without exp, JWT_REQUIRE_EXP=false: %d %s, want 200", path, res.status, res.body)
		}
		for name, r := range map[string]*coreReplica{"default": strict, "JWT_REQUIRE_EXP=false": lax} {
			if res := doWithToken(t, "GET", r.url+path, expired, ""); res.status != http.StatusUnauthorized {
				t.Errorf("GET %s with an expired JWT (%s): %d %s, want 401", path, name, res.status, res.body)
			}
		}
	}
	res := doWithToken(t, "POST", strict.url+"/api/v1/push", forever, `{"items":[{"queue":"q","payload":1}]}`)
	if res.status != http.StatusUnauthorized {
		t.Errorf("a push with a JWT without exp: %d %s, want 401", res.status, res.body)
	}
}

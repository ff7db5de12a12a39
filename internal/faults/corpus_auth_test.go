package faults_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/internal/auth"
	"github.com/lethe-mq/lethe/internal/config"
	"github.com/lethe-mq/lethe/internal/testserver"
)

// The credentials of the credential corpus's replica.
const (
	corpusWriteToken    = "corpus-write"
	corpusOperatorToken = "corpus-operator"
	corpusJWTSecret     = "corpus-jwt-secret"
)

// credentialRequest is a bad request made with a credential; its error
// must say says, when set.
type credentialRequest struct {
	badRequest
	token, says string
}

// corpusJWT signs an HS256 token with claims; exp and iat are now-based
// unless claims sets them (nil deletes one).
func corpusJWT(t *testing.T, claims jwt.MapClaims) string {
	t.Helper()
	now := time.Now()
	c := jwt.MapClaims{"sub": "corpus", "role": "read-write", "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
	for k, v := range claims {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString([]byte(corpusJWTSecret))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// credentialCases are requests whose credential lacks what they ask for:
// a token that proves nothing (no expiry, expired, unsigned, unknown) is
// 401, a valid one without the role the request needs 403.
func credentialCases(t *testing.T) []credentialRequest {
	noExp := corpusJWT(t, jwt.MapClaims{"exp": nil})
	expired := corpusJWT(t, jwt.MapClaims{"exp": time.Now().Add(-time.Hour).Unix()})
	none, err := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims{"sub": "x", "role": "admin",
		"exp": time.Now().Add(time.Hour).Unix()}).SignedString(jwt.UnsafeAllowNoneSignatureType)
	if err != nil {
		t.Fatal(err)
	}
	writer, reader := corpusJWT(t, nil), corpusJWT(t, jwt.MapClaims{"role": "read-only"})
	reset := `{"name":"seed-query","source_queue":"seed","config_hash":"h2","reset":true}`
	req := func(name, method, path, body, token string, want int) credentialRequest {
		return credentialRequest{badRequest{name, method, path, body, want}, token, ""}
	}
	saying := func(c credentialRequest, says string) credentialRequest { c.says = says; return c }
	var out []credentialRequest
	for _, bad := range []struct{ what, token, says string }{
		{"a JWT without exp", noExp, "no expiry"}, {"an expired JWT", expired, "expired"},
		{"an unsigned JWT", none, "algorithm"}, {"an unknown token", "nobody", "wrong bearer token"},
	} {
		out = append(out,
			saying(req(bad.what+" reads", "GET", "/api/v1/resources/queues", "", bad.token, http.StatusUnauthorized), bad.says),
			saying(req(bad.what+" pushes", "POST", "/api/v1/push", `{"items":[{"queue":"seed","payload":1}]}`, bad.token, http.StatusUnauthorized), bad.says),
			saying(req(bad.what+" registers", "POST", "/streams/v1/queries", `{"name":"q","source_queue":"seed","config_hash":"h"}`, bad.token,
				http.StatusUnauthorized), bad.says),
			saying(req(bad.what+" deletes", "DELETE", "/api/v1/resources/queues/seed", "", bad.token, http.StatusUnauthorized), bad.says))
	}
	return append(out,
		saying(req("a reset by the write token", "POST", "/streams/v1/queries", reset, corpusWriteToken, http.StatusForbidden), "operator role"),
		saying(req("a reset by a read-write JWT", "POST", "/streams/v1/queries", reset, writer, http.StatusForbidden), "operator role"),
		req("a removal by the write token", "DELETE", "/streams/v1/queries/seed-query", "", corpusWriteToken, http.StatusForbidden),
		req("a push by a read-only JWT", "POST", "/api/v1/push", `{"items":[{"queue":"seed","payload":1}]}`, reader, http.StatusForbidden),
		req("a cycle by a read-only JWT", "POST", "/streams/v1/cycle", `{}`, reader, http.StatusForbidden),
		req("a push without a token", "POST", "/api/v1/push", `{"items":[{"queue":"seed","payload":1}]}`, "", http.StatusUnauthorized),
	)
}

// TestBadCredentialCorpus sends every request of the credential corpus to
// a replica with its static tokens and HS256 JWTs on, and requires of
// each what TestBadRequestCorpus requires: the expected status, a JSON
// error with a request id revealing nothing of the database, and no row
// of any lethe table changed.
func TestBadCredentialCorpus(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, testserver.Options{Config: func(c *config.Server) {
		c.DataDir = t.TempDir()
		c.AuthToken, c.OperatorToken = corpusWriteToken, corpusOperatorToken
		c.JWT = &auth.JWTConfig{Algorithm: auth.AlgHS256, Secret: corpusJWTSecret, ClockSkew: 30 * time.Second,
			RolesClaim: "role", RolesArrayClaim: "roles", RoleAdmin: "admin", RoleReadWrite: "read-write", RoleReadOnly: "read-only"}
	}})
	seedAs(t, s, corpusOperatorToken)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, s.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	leaks := leakWords(t, s.DatabaseURL)
	before := snapshot(t, conn)
	for _, c := range credentialCases(t) {
		a := sendAs(t, s.URL, c.badRequest, c.token)
		checkAnswer(t, c.badRequest, a, leaks)
		if c.says != "" && !strings.Contains(string(a.body), c.says) {
			t.Errorf("%s: %s %s answered %s, want it to say %q", c.name, c.method, c.path, a.body, c.says)
		}
		if after := snapshot(t, conn); len(changedTables(before, after)) > 0 {
			t.Errorf("%s: %s %s changed lethe.%v", c.name, c.method, c.path, changedTables(before, after))
			before = after
		}
	}
}

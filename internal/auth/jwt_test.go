package auth

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/lethe-mq/lethe/internal/apierr"
)

var jwtT0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// queenJWT is Queen's JWT defaults with a fixed clock.
func queenJWT(alg string) *JWTConfig {
	return &JWTConfig{Algorithm: alg, ClockSkew: 30 * time.Second, RolesClaim: "role", RolesArrayClaim: "roles",
		RoleAdmin: "admin", RoleReadWrite: "read-write", RoleReadOnly: "read-only", Now: func() time.Time { return jwtT0 }}
}

// claims are a token's claims valid at jwtT0 for an hour.
func claims(extra jwt.MapClaims) jwt.MapClaims {
	c := jwt.MapClaims{"sub": "alice", "role": "read-write", "iat": jwtT0.Unix(), "exp": jwtT0.Add(time.Hour).Unix()}
	for k, v := range extra {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return c
}

func sign(t *testing.T, m jwt.SigningMethod, key any, c jwt.MapClaims, kid string) string {
	t.Helper()
	tok := jwt.NewWithClaims(m, c)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// check calls a write route with tok and says what came back.
func check(a *Authenticator, tok string, role Role) (Identity, error) {
	return a.Check(request(tok), role)
}

func TestJWTHS256(t *testing.T) {
	t.Parallel()
	cfg := queenJWT(AlgHS256)
	cfg.Secret, cfg.Issuer, cfg.Audience = "s3cret", "https://idp.example", "lethe"
	a := mustNew(t, Config{JWT: cfg})
	good := claims(jwt.MapClaims{"iss": "https://idp.example", "aud": "lethe"})
	hs := func(c jwt.MapClaims, secret string) string {
		return sign(t, jwt.SigningMethodHS256, []byte(secret), c, "")
	}
	id, err := check(a, hs(good, "s3cret"), Write)
	if err != nil || id.Subject != "alice" || id.Role != Write {
		t.Fatalf("valid token: %+v, %v", id, err)
	}
	none, _ := jwt.NewWithClaims(jwt.SigningMethodNone, good).SignedString(jwt.UnsafeAllowNoneSignatureType)
	for _, c := range []struct{ name, tok, says string }{
		{"expired", hs(claims(jwt.MapClaims{"iss": "https://idp.example", "aud": "lethe", "exp": jwtT0.Add(-time.Minute).Unix()}), "s3cret"), "expired"},
		{"wrong audience", hs(claims(jwt.MapClaims{"iss": "https://idp.example", "aud": "other"}), "s3cret"), "audience"},
		{"no audience", hs(claims(jwt.MapClaims{"iss": "https://idp.example"}), "s3cret"), "aud claim is required"},
		{"wrong issuer", hs(claims(jwt.MapClaims{"iss": "https://evil.example", "aud": "lethe"}), "s3cret"), "issuer"},
		{"bad signature", hs(good, "guessed"), "signature"},
		{"alg none", none, "algorithm"},
		{"not yet valid", hs(claims(jwt.MapClaims{"iss": "https://idp.example", "aud": "lethe", "nbf": jwtT0.Add(time.Hour).Unix()}), "s3cret"), "not valid yet"},
		{"garbage", "a.b.c", "malformed"},
		{"no expiry", hs(claims(jwt.MapClaims{"iss": "https://idp.example", "aud": "lethe", "exp": nil}), "s3cret"), "no expiry"},
	} {
		_, err := check(a, c.tok, Write)
		if !errors.Is(err, apierr.Unauthorized) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v, want 401 saying %q", c.name, err, c.says)
		}
	}
	// Within the clock skew an expired token still passes, as in Queen.
	late := claims(jwt.MapClaims{"iss": "https://idp.example", "aud": "lethe", "exp": jwtT0.Add(-20 * time.Second).Unix()})
	if _, err := check(a, hs(late, "s3cret"), Write); err != nil {
		t.Errorf("expired 20 s ago with 30 s skew: %v", err)
	}
}

// A token without exp never expires: refused unless AllowNoExpiry
// (JWT_REQUIRE_EXP=false), which still refuses an expired one.
func TestJWTWithoutExpiry(t *testing.T) {
	t.Parallel()
	cfg := queenJWT(AlgHS256)
	cfg.Secret = "k"
	forever := sign(t, jwt.SigningMethodHS256, []byte("k"), claims(jwt.MapClaims{"exp": nil}), "")
	expired := sign(t, jwt.SigningMethodHS256, []byte("k"), claims(jwt.MapClaims{"exp": jwtT0.Add(-time.Hour).Unix()}), "")
	strict := mustNew(t, Config{JWT: cfg})
	if _, err := check(strict, forever, Write); !errors.Is(err, apierr.Unauthorized) || !strings.Contains(err.Error(), "JWT_REQUIRE_EXP") {
		t.Errorf("a token without exp by default: %v, want 401 saying it has no expiry and the setting", err)
	}
	lax := *cfg
	lax.AllowNoExpiry = true
	a := mustNew(t, Config{JWT: &lax})
	if id, err := check(a, forever, Write); err != nil || id.Role != Write {
		t.Errorf("a token without exp with AllowNoExpiry: %+v, %v; want it accepted", id, err)
	}
	if _, err := check(a, expired, Write); !errors.Is(err, apierr.Unauthorized) || !strings.Contains(err.Error(), "expired") {
		t.Errorf("an expired token with AllowNoExpiry: %v, want 401 saying it expired", err)
	}
}

func TestJWTRolesMapOntoLetheRoles(t *testing.T) {
	t.Parallel()
	cfg := queenJWT(AlgHS256)
	cfg.Secret = "k"
	a := mustNew(t, Config{Token: "static", JWT: cfg})
	tok := func(extra jwt.MapClaims) string {
		return sign(t, jwt.SigningMethodHS256, []byte("k"), claims(extra), "")
	}
	for _, c := range []struct {
		name  string
		token string
		grant Role
	}{
		{"admin", tok(jwt.MapClaims{"role": "admin"}), Operator},
		{"read-write", tok(nil), Write},
		{"read-only", tok(jwt.MapClaims{"role": "read-only"}), Read},
		{"roles array", tok(jwt.MapClaims{"role": nil, "roles": []string{"viewer", "admin"}}), Operator},
		{"no known role", tok(jwt.MapClaims{"role": "viewer"}), Public},
		{"static token still works", "static", Write},
	} {
		for _, need := range []Role{Read, Write, Operator} {
			_, err := check(a, c.token, need)
			if want := c.grant >= need; (err == nil) != want {
				t.Errorf("%s on a %s route: %v, want allowed=%v", c.name, need, err, want)
			}
			if err != nil && !errors.Is(err, apierr.Forbidden) {
				t.Errorf("%s on a %s route: %v, want 403 (a valid token without the role)", c.name, need, err)
			}
		}
	}
}

func TestJWTRS256WithAPublicKeyRefusesAlgorithmConfusion(t *testing.T) {
	t.Parallel()
	priv, _ := rsa.GenerateKey(rand.Reader, 2048)
	der, _ := x509.MarshalPKIXPublicKey(&priv.PublicKey)
	pemKey := string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
	cfg := queenJWT(AlgRS256)
	cfg.PublicKeyPEM = strings.ReplaceAll(pemKey, "\n", `\n`) // as an env file writes it
	a := mustNew(t, Config{JWT: cfg})
	if _, err := check(a, sign(t, jwt.SigningMethodRS256, priv, claims(nil), ""), Write); err != nil {
		t.Fatalf("RS256 token: %v", err)
	}
	if _, err := check(a, sign(t, jwt.SigningMethodRS512, priv, claims(nil), ""), Write); err != nil {
		t.Errorf("RS512 token under RS256 (Queen accepts the family): %v", err)
	}
	// HS256 signed with the public key as the secret: refused.
	forged := sign(t, jwt.SigningMethodHS256, []byte(pemKey), claims(jwt.MapClaims{"role": "admin"}), "")
	if _, err := check(a, forged, Read); !errors.Is(err, apierr.Unauthorized) {
		t.Errorf("HS256 token against an RS256 server: %v, want 401", err)
	}
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	if _, err := check(a, sign(t, jwt.SigningMethodRS256, other, claims(nil), ""), Read); !errors.Is(err, apierr.Unauthorized) {
		t.Errorf("token of another key: %v, want 401", err)
	}
}

// jwksServer serves keys as a JWKS and counts the fetches.
func jwksServer(t *testing.T, keys ...map[string]string) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": keys})
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func TestJWTFromJWKSIsCachedAndRefetchedForANewKid(t *testing.T) {
	t.Parallel()
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	edPub, edPriv, _ := ed25519.GenerateKey(rand.Reader)
	srv, fetches := jwksServer(t,
		map[string]string{"kid": "r1", "kty": "RSA", "use": "sig", "n": b64(rsaKey.N.Bytes()), "e": b64(big.NewInt(int64(rsaKey.E)).Bytes())},
		map[string]string{"kid": "e1", "kty": "OKP", "crv": "Ed25519", "x": b64(edPub)},
		map[string]string{"kid": "enc", "kty": "RSA", "use": "enc", "n": "AQAB", "e": "AQAB"})
	now := jwtT0
	cfg := queenJWT(AlgAuto)
	cfg.JWKSURL, cfg.JWKSRefresh, cfg.Now = srv.URL, time.Hour, func() time.Time { return now }
	a := mustNew(t, Config{JWT: cfg})
	for range 3 {
		if _, err := check(a, sign(t, jwt.SigningMethodRS256, rsaKey, claims(nil), "r1"), Write); err != nil {
			t.Fatalf("RS256 via JWKS: %v", err)
		}
	}
	if _, err := check(a, sign(t, jwt.SigningMethodEdDSA, edPriv, claims(nil), "e1"), Write); err != nil {
		t.Fatalf("EdDSA via JWKS: %v", err)
	}
	if fetches.Load() != 1 {
		t.Errorf("%d JWKS fetches for 4 tokens, want 1 (cached)", fetches.Load())
	}
	// An unknown kid fetches again, but not on every token.
	now = now.Add(11 * time.Second)
	for range 3 {
		if _, err := check(a, sign(t, jwt.SigningMethodRS256, rsaKey, claims(nil), "r2"), Write); !errors.Is(err, apierr.Unauthorized) {
			t.Errorf("unknown kid: %v, want 401", err)
		}
	}
	if fetches.Load() != 2 {
		t.Errorf("%d JWKS fetches after 3 tokens with an unknown kid, want 2", fetches.Load())
	}
	now = now.Add(2 * time.Hour) // past the refresh interval: fetched again
	tok := sign(t, jwt.SigningMethodRS256, rsaKey, claims(jwt.MapClaims{"iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}), "r1")
	if _, err := check(a, tok, Write); err != nil || fetches.Load() != 3 {
		t.Errorf("after the refresh interval: %v, %d fetches, want 3", err, fetches.Load())
	}
}

func TestJWKSUnreachableIsUnavailableWithinTheTimeout(t *testing.T) {
	t.Parallel()
	hang := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(hang); srv.Close() })
	cfg := queenJWT(AlgRS256)
	cfg.JWKSURL, cfg.JWKSTimeout = srv.URL, 200*time.Millisecond
	a := mustNew(t, Config{JWT: cfg})
	key, _ := rsa.GenerateKey(rand.Reader, 2048)
	start := time.Now()
	_, err := check(a, sign(t, jwt.SigningMethodRS256, key, claims(nil), "k"), Write)
	if !errors.Is(err, apierr.Unavailable) {
		t.Errorf("JWKS that does not answer: %v, want 503", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the fetch took %s; the timeout is 200ms", d)
	}
	// Right after, no new fetch is tried, and it is still 503, not 401.
	if _, err := check(a, sign(t, jwt.SigningMethodRS256, key, claims(nil), "k"), Write); !errors.Is(err, apierr.Unavailable) {
		t.Errorf("second token while the JWKS is down: %v, want 503", err)
	}
}

func TestJWTConfigErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		cfg  func(*JWTConfig)
	}{
		{"HS256 without a secret", func(c *JWTConfig) {}},
		{"RS256 without a key", func(c *JWTConfig) { c.Algorithm, c.Secret = AlgRS256, "s" }},
		{"unknown algorithm", func(c *JWTConfig) { c.Algorithm, c.Secret = "PS256", "s" }},
		{"bad PEM", func(c *JWTConfig) { c.Algorithm, c.PublicKeyPEM = AlgRS256, "-----BEGIN PUBLIC KEY-----\nnope\n" }},
	} {
		cfg := queenJWT(AlgHS256)
		c.cfg(cfg)
		if _, err := New(Config{JWT: cfg}); err == nil {
			t.Errorf("%s: accepted", c.name)
		}
	}
	if _, err := newJWKSCache("", nil, 0, 0, time.Now).key(context.Background(), ""); err == nil {
		t.Error("a JWKS without a URL answered a key")
	}
}

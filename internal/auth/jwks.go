package auth

import (
	"cmp"
	"context"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Defaults of the JWKS cache.
const (
	JWKSRefreshDefault = time.Hour
	JWKSTimeoutDefault = 5 * time.Second
	// jwksMinRefetch bounds how often tokens naming an unknown kid make
	// the cache fetch again, so they cannot turn lethe into a load on the
	// identity provider.
	jwksMinRefetch = 10 * time.Second
	// jwksMaxBytes bounds a JWKS document.
	jwksMaxBytes = 1 << 20
)

// jwksUnavailable is a JWKS that could not be fetched: the token may be
// fine, so the caller is told to retry (503), not that it is refused.
type jwksUnavailable struct{ err error }

func (e jwksUnavailable) Error() string { return e.err.Error() }

// jwksCache holds the keys of a JWKS URL by kid, fetched with a timeout
// and kept for refresh. Lookups never wait for a fetch unless they need
// one; fetches happen one at a time.
type jwksCache struct {
	url     string
	client  *http.Client
	refresh time.Duration
	now     func() time.Time

	fetchMu sync.Mutex // held while fetching

	mu        sync.Mutex // guards the fields below
	keys      map[string]any
	fetchedAt time.Time
	triedAt   time.Time
	lastErr   error // of the last fetch
}

func newJWKSCache(url string, client *http.Client, timeout, refresh time.Duration, now func() time.Time) *jwksCache {
	if timeout <= 0 {
		timeout = JWKSTimeoutDefault
	}
	if client == nil {
		client = &http.Client{Timeout: timeout}
	}
	if refresh <= 0 {
		refresh = JWKSRefreshDefault
	}
	return &jwksCache{url: url, client: client, refresh: refresh, now: now}
}

// key answers the key named kid. Keys older than the refresh interval, or
// a kid not among them, fetch the JWKS again, at most every jwksMinRefetch
// (meanwhile the keys fetched before are used); a token without a kid uses
// the only key of a JWKS that has one.
func (c *jwksCache) key(ctx context.Context, kid string) (any, error) {
	if k := c.cached(kid, false); k != nil {
		return k, nil
	}
	c.fetchMu.Lock()
	defer c.fetchMu.Unlock()
	if k := c.cached(kid, false); k != nil { // fetched while this one waited
		return k, nil
	}
	if c.mayFetch() {
		keys, err := c.fetch(ctx)
		c.mu.Lock()
		if err == nil {
			c.keys, c.fetchedAt = keys, c.now()
		}
		c.lastErr = err
		c.mu.Unlock()
	}
	if err := c.unavailable(); err != nil {
		return nil, err
	}
	if k := c.cached(kid, true); k != nil {
		return k, nil
	}
	return nil, fmt.Errorf("no key with kid %q in the JWKS", kid)
}

// cached is the key named kid among the fetched keys: only while they are
// fresh, unless stale keys will do.
func (c *jwksCache) cached(kid string, staleOK bool) any {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.keys == nil || !staleOK && c.now().Sub(c.fetchedAt) >= c.refresh {
		return nil
	}
	if k, ok := c.keys[kid]; ok {
		return k
	}
	if kid == "" && len(c.keys) == 1 {
		for _, k := range c.keys {
			return k
		}
	}
	return nil
}

// unavailable is the error of a cache that holds no keys: none could be
// fetched yet.
func (c *jwksCache) unavailable() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.keys != nil {
		return nil
	}
	return jwksUnavailable{cmp.Or(c.lastErr, errors.New("the JWKS was not fetched yet"))}
}

// mayFetch says a fetch may start now, and records it.
func (c *jwksCache) mayFetch() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if !c.triedAt.IsZero() && now.Sub(c.triedAt) < jwksMinRefetch {
		return false
	}
	c.triedAt = now
	return true
}

// fetch reads the JWKS: RSA and Ed25519 signing keys, by kid.
func (c *jwksCache) fetch(ctx context.Context) (map[string]any, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url, nil)
	if err != nil {
		return nil, fmt.Errorf("JWKS %s: %w", c.url, err)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetch JWKS %s: %w", c.url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetch JWKS %s: HTTP %d", c.url, resp.StatusCode)
	}
	var doc struct {
		Keys []jwk `json:"keys"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, jwksMaxBytes)).Decode(&doc); err != nil {
		return nil, fmt.Errorf("JWKS %s: %w", c.url, err)
	}
	keys := map[string]any{}
	for _, k := range doc.Keys {
		if pub, err := k.publicKey(); err == nil {
			keys[k.Kid] = pub
		}
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("JWKS %s holds no RSA or Ed25519 signing key", c.url)
	}
	return keys, nil
}

// jwk is one key of a JWKS (RFC 7517).
type jwk struct {
	Kid string `json:"kid"`
	Kty string `json:"kty"`
	Use string `json:"use"`
	Crv string `json:"crv"`
	N   string `json:"n"`
	E   string `json:"e"`
	X   string `json:"x"`
}

func (k jwk) publicKey() (any, error) {
	if k.Use != "" && k.Use != "sig" {
		return nil, errors.New("not a signing key")
	}
	switch {
	case k.Kty == "RSA":
		n, errN := base64.RawURLEncoding.DecodeString(k.N)
		e, errE := base64.RawURLEncoding.DecodeString(k.E)
		if errN != nil || errE != nil || len(n) == 0 || len(e) == 0 || len(e) > 4 {
			return nil, errors.New("bad RSA key")
		}
		return &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}, nil
	case k.Kty == "OKP" && k.Crv == "Ed25519":
		x, err := base64.RawURLEncoding.DecodeString(k.X)
		if err != nil || len(x) != ed25519.PublicKeySize {
			return nil, errors.New("bad Ed25519 key")
		}
		return ed25519.PublicKey(x), nil
	}
	return nil, errors.New("unsupported key type")
}

// parsePublicKeyPEM reads an RSA or Ed25519 public key (PKIX, PKCS #1 or a
// certificate). "\n" written as two characters, as environment files often
// hold a PEM, is read as a line break.
func parsePublicKeyPEM(s string) (any, error) {
	block, _ := pem.Decode([]byte(strings.ReplaceAll(s, `\n`, "\n")))
	if block == nil {
		return nil, errors.New("not a PEM block")
	}
	var key any
	var err error
	switch block.Type {
	case "RSA PUBLIC KEY":
		key, err = x509.ParsePKCS1PublicKey(block.Bytes)
	case "CERTIFICATE":
		var cert *x509.Certificate
		if cert, err = x509.ParseCertificate(block.Bytes); err == nil {
			key = cert.PublicKey
		}
	default:
		key, err = x509.ParsePKIXPublicKey(block.Bytes)
	}
	if err != nil {
		return nil, err
	}
	switch key.(type) {
	case *rsa.PublicKey, ed25519.PublicKey:
		return key, nil
	}
	return nil, fmt.Errorf("a %T key; only RSA and Ed25519 are accepted", key)
}

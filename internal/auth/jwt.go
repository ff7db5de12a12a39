package auth

import (
	"context"
	"crypto/ed25519"
	"crypto/rsa"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/lethe-mq/lethe/internal/apierr"
)

// JWTConfig are Queen's JWT settings (its variable names in brackets).
type JWTConfig struct {
	// Algorithm is HS256, RS256 (RS256, RS384 or RS512 tokens), EdDSA, or
	// auto (whichever the token names, among those a key is configured
	// for) [JWT_ALGORITHM].
	Algorithm string
	Secret    string // HS256 [JWT_SECRET]
	// PublicKeyPEM verifies RS256 or EdDSA tokens [JWT_PUBLIC_KEY]; else
	// JWKSURL serves the keys by kid [JWT_JWKS_URL].
	PublicKeyPEM string
	JWKSURL      string
	// Issuer and Audience, when set, must match the iss and aud claims
	// [JWT_ISSUER, JWT_AUDIENCE].
	Issuer, Audience string
	// ClockSkew is the tolerance on exp, nbf and iat [JWT_CLOCK_SKEW].
	ClockSkew time.Duration
	// AllowNoExpiry accepts a token without exp, which would otherwise
	// stay valid for ever; false (the default) refuses it
	// [JWT_REQUIRE_EXP=false sets it].
	AllowNoExpiry bool
	// JWKSRefresh is how long fetched keys are used before fetching again
	// [JWT_JWKS_REFRESH_INTERVAL]; JWKSTimeout bounds a fetch
	// [JWT_JWKS_TIMEOUT_MS].
	JWKSRefresh, JWKSTimeout time.Duration
	// RolesClaim holds one role, RolesArrayClaim a list [JWT_ROLES_CLAIM,
	// JWT_ROLES_ARRAY_CLAIM].
	RolesClaim, RolesArrayClaim string
	// The role values that grant operator, write and read [JWT_ROLE_ADMIN,
	// JWT_ROLE_READ_WRITE, JWT_ROLE_READ_ONLY].
	RoleAdmin, RoleReadWrite, RoleReadOnly string
	// Now is the clock exp and nbf are judged by (time.Now when nil).
	Now func() time.Time
	// HTTPClient fetches the JWKS (a client with JWKSTimeout when nil).
	HTTPClient *http.Client
}

// Algorithm choices.
const (
	AlgHS256 = "HS256"
	AlgRS256 = "RS256"
	AlgEdDSA = "EdDSA"
	AlgAuto  = "auto"
)

// jwtVerifier checks JWTs and maps their role claims onto lethe's roles.
type jwtVerifier struct {
	cfg     JWTConfig
	parser  *jwt.Parser
	methods []string
	static  any // a parsed PublicKeyPEM: *rsa.PublicKey or ed25519.PublicKey
	jwks    *jwksCache
}

func newJWTVerifier(cfg JWTConfig) (*jwtVerifier, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	v := &jwtVerifier{cfg: cfg}
	if cfg.PublicKeyPEM != "" {
		k, err := parsePublicKeyPEM(cfg.PublicKeyPEM)
		if err != nil {
			return nil, fmt.Errorf("JWT_PUBLIC_KEY: %w", err)
		}
		v.static = k
	} else if cfg.JWKSURL != "" {
		v.jwks = newJWKSCache(cfg.JWKSURL, cfg.HTTPClient, cfg.JWKSTimeout, cfg.JWKSRefresh, cfg.Now)
	}
	methods, err := v.allowedMethods()
	if err != nil {
		return nil, err
	}
	v.methods = methods
	opts := []jwt.ParserOption{jwt.WithValidMethods(methods), jwt.WithLeeway(cfg.ClockSkew), jwt.WithTimeFunc(cfg.Now), jwt.WithIssuedAt()}
	if !cfg.AllowNoExpiry {
		opts = append(opts, jwt.WithExpirationRequired())
	}
	if cfg.Issuer != "" {
		opts = append(opts, jwt.WithIssuer(cfg.Issuer))
	}
	if cfg.Audience != "" {
		opts = append(opts, jwt.WithAudience(cfg.Audience))
	}
	v.parser = jwt.NewParser(opts...)
	return v, nil
}

// allowedMethods are the alg values a token may name: those of the
// configured algorithm that a key is configured for. "none" never is.
func (v *jwtVerifier) allowedMethods() ([]string, error) {
	alg := v.cfg.Algorithm
	if !slices.Contains([]string{AlgHS256, AlgRS256, AlgEdDSA, AlgAuto}, alg) {
		return nil, fmt.Errorf("JWT_ALGORITHM must be HS256, RS256, EdDSA or auto, got %q", alg)
	}
	asym := v.static != nil || v.jwks != nil
	var out []string
	if v.cfg.Secret != "" && (alg == AlgHS256 || alg == AlgAuto) {
		out = append(out, "HS256")
	}
	if asym && (alg == AlgRS256 || alg == AlgAuto) {
		out = append(out, "RS256", "RS384", "RS512")
	}
	if asym && (alg == AlgEdDSA || alg == AlgAuto) {
		out = append(out, "EdDSA")
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("JWT_ALGORITHM %s needs a key: JWT_SECRET for HS256, JWT_PUBLIC_KEY or JWT_JWKS_URL for RS256 and EdDSA", v.cfg.Algorithm)
	}
	return out, nil
}

// identify verifies tok and answers its identity; a token that does not
// verify is Unauthorized with the reason, a JWKS that cannot be fetched
// Unavailable.
func (v *jwtVerifier) identify(ctx context.Context, tok string) (Identity, error) {
	claims := jwt.MapClaims{}
	_, err := v.parser.ParseWithClaims(tok, claims, func(t *jwt.Token) (any, error) { return v.key(ctx, t) })
	if err != nil {
		var unavailable jwksUnavailable
		if errors.As(err, &unavailable) {
			return Identity{}, apierr.New(apierr.Unavailable, "cannot verify the token now: %v", unavailable.err)
		}
		return Identity{}, apierr.New(apierr.Unauthorized, "invalid token: %s", jwtReason(err))
	}
	sub, _ := claims.GetSubject()
	return Identity{Role: v.roleOf(claims), Subject: sub, Authenticated: true}, nil
}

// key is the key that verifies t: the secret for HS256, else the static
// public key or the JWKS key named by t's kid, of the type t's alg needs.
func (v *jwtVerifier) key(ctx context.Context, t *jwt.Token) (any, error) {
	if _, ok := t.Method.(*jwt.SigningMethodHMAC); ok {
		return []byte(v.cfg.Secret), nil
	}
	k := v.static
	if k == nil {
		kid, _ := t.Header["kid"].(string)
		var err error
		if k, err = v.jwks.key(ctx, kid); err != nil {
			return nil, err
		}
	}
	switch t.Method.(type) {
	case *jwt.SigningMethodRSA:
		if rk, ok := k.(*rsa.PublicKey); ok {
			return rk, nil
		}
	case *jwt.SigningMethodEd25519:
		if ek, ok := k.(ed25519.PublicKey); ok {
			return ek, nil
		}
	}
	return nil, fmt.Errorf("the key does not fit the token's algorithm %s", t.Method.Alg())
}

// roleOf is the highest role the token's role claims grant (Public: none).
func (v *jwtVerifier) roleOf(claims jwt.MapClaims) Role {
	roles := []string{}
	if r, ok := claims[v.cfg.RolesClaim].(string); ok {
		roles = append(roles, r)
	}
	if list, ok := claims[v.cfg.RolesArrayClaim].([]any); ok {
		for _, r := range list {
			if s, ok := r.(string); ok {
				roles = append(roles, s)
			}
		}
	}
	switch {
	case slices.Contains(roles, v.cfg.RoleAdmin):
		return Operator
	case slices.Contains(roles, v.cfg.RoleReadWrite):
		return Write
	case slices.Contains(roles, v.cfg.RoleReadOnly):
		return Read
	}
	return Public
}

// roleValue is the claim value that grants role.
func (v *jwtVerifier) roleValue(role Role) string {
	switch role {
	case Operator:
		return v.cfg.RoleAdmin
	case Write:
		return v.cfg.RoleReadWrite
	}
	return v.cfg.RoleReadOnly
}

// jwtReason says in a few words why a token failed.
func jwtReason(err error) string {
	for _, r := range []struct {
		err  error
		says string
	}{
		{jwt.ErrTokenMalformed, "it is malformed"},
		{jwt.ErrTokenExpired, "it has expired"},
		{jwt.ErrTokenNotValidYet, "it is not valid yet"},
		{jwt.ErrTokenUsedBeforeIssued, "it was issued in the future"},
		{jwt.ErrTokenInvalidAudience, "wrong audience (aud)"},
		{jwt.ErrTokenInvalidIssuer, "wrong issuer (iss)"},
		{jwt.ErrTokenSignatureInvalid, "bad signature, or an algorithm the server does not accept"},
	} {
		if errors.Is(err, r.err) {
			return r.says
		}
	}
	if errors.Is(err, jwt.ErrTokenRequiredClaimMissing) && strings.Contains(err.Error(), "exp claim") {
		return "the token has no expiry (exp); issue tokens with exp, or set JWT_REQUIRE_EXP=false on the server to accept tokens that never expire"
	}
	if errors.Is(err, jwt.ErrTokenRequiredClaimMissing) {
		// "token has invalid claims: token is missing required claim: aud claim is required"
		return err.Error()[strings.LastIndex(err.Error(), ": ")+2:]
	}
	return err.Error()
}

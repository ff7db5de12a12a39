// Package auth is lethe's optional authentication and its roles. A caller
// is known by a bearer token: lethe's static tokens (LETHE_AUTH_TOKEN for
// producers and consumers, LETHE_OPERATOR_TOKEN for everything that can
// delete or skip data), or a JWT as Queen accepts it (JWT_ENABLED: HS256
// with JWT_SECRET, RS256 or EdDSA with JWT_PUBLIC_KEY or JWT_JWKS_URL),
// whose role claim maps onto lethe's roles. With no token and no JWT
// configured, authentication is off and every caller is an operator: lethe
// then serves loopback only (Posture "loopback-only"), unless LETHE_AUTH=none
// opens it on purpose (Posture "none").
package auth

import (
	"context"
	"net/http"
	"strings"

	"github.com/lethe-mq/lethe/internal/apierr"
)

// Role is what a route needs from its caller, and what a credential
// grants; each role includes the ones before it.
type Role int

const (
	// Public routes need no token: health and metrics.
	Public Role = iota
	// Read routes list and show: status, resources, messages, dead letters.
	Read
	// Write routes produce and consume: push, pop, ack, transactions,
	// lease extension, configure.
	Write
	// Operator routes delete or skip data.
	Operator
)

func (r Role) String() string {
	switch r {
	case Public:
		return "public"
	case Read:
		return "read"
	case Write:
		return "write"
	case Operator:
		return "operator"
	}
	return "unknown"
}

// Identity is who a request's credential says the caller is.
type Identity struct {
	Role Role
	// Authenticated says a credential verified, even one granting no
	// role (a JWT without a role lethe knows: 403, not 401).
	Authenticated bool
	// Subject is a JWT's sub claim ("" for a static token or no auth);
	// pushes stamp it on their messages as producerSub, as Queen does.
	Subject string
}

// Config is what authentication is configured with.
type Config struct {
	Token         string // LETHE_AUTH_TOKEN: read and write
	OperatorToken string // LETHE_OPERATOR_TOKEN: everything
	// JWT, when not nil, also accepts JWTs.
	JWT *JWTConfig
	// None records LETHE_AUTH=none: no credentials on purpose, on any
	// address. It changes no check, only what Posture says.
	None bool
}

// The postures Posture answers.
const (
	PostureCredentials = "credentials"   // every call but public ones shows a credential
	PostureLoopback    = "loopback-only" // no credentials; served on loopback only
	PostureNone        = "none"          // no credentials on any address (LETHE_AUTH=none)
)

// Posture says how callers are admitted, for /health and the start-up log.
func (a *Authenticator) Posture() string {
	switch {
	case a.On():
		return PostureCredentials
	case a != nil && a.cfg.None:
		return PostureNone
	}
	return PostureLoopback
}

// Authenticator checks requests' credentials against the route's role.
type Authenticator struct {
	cfg Config
	jwt *jwtVerifier
}

// New builds an Authenticator; it fails when the JWT settings are unusable
// (a key that does not parse, an algorithm without a key).
func New(cfg Config) (*Authenticator, error) {
	a := &Authenticator{cfg: cfg}
	if cfg.JWT != nil {
		v, err := newJWTVerifier(*cfg.JWT)
		if err != nil {
			return nil, err
		}
		a.jwt = v
	}
	return a, nil
}

// On reports whether authentication is on.
func (a *Authenticator) On() bool {
	return a != nil && (a.cfg.Token != "" || a.cfg.OperatorToken != "" || a.jwt != nil)
}

// Identify says who r's credential is: an operator when auth is off, a
// Public identity without a credential, an Unauthorized error for a
// credential that is wrong (an unknown token, a JWT that does not verify).
func (a *Authenticator) Identify(r *http.Request) (Identity, error) {
	if !a.On() {
		return Identity{Role: Operator, Authenticated: true}, nil
	}
	tok := bearer(r)
	switch {
	case tok == "":
		return Identity{Role: Public}, nil
	case tokenIs(tok, a.cfg.OperatorToken):
		return Identity{Role: Operator, Authenticated: true}, nil
	case tokenIs(tok, a.cfg.Token):
		return Identity{Role: Write, Authenticated: true}, nil
	case a.jwt != nil && looksLikeJWT(tok):
		return a.jwt.identify(r.Context(), tok)
	}
	return Identity{}, apierr.New(apierr.Unauthorized, "wrong bearer token: send Authorization: Bearer <token> with %s", a.credentials())
}

// Check answers the caller's identity when it may call a route that needs
// role, else an Unauthorized or Forbidden error that says what to send.
func (a *Authenticator) Check(r *http.Request, role Role) (Identity, error) {
	id, err := a.Identify(r)
	if err != nil {
		if role == Public {
			return Identity{Role: Public}, nil
		}
		return id, err
	}
	switch {
	case id.Role >= role:
		return id, nil
	case !id.Authenticated:
		return id, apierr.New(apierr.Unauthorized, "missing bearer token: send Authorization: Bearer <token> with %s", a.credentials())
	case role == Operator:
		return id, a.OperatorNeeded("this operation deletes or skips data")
	}
	return id, apierr.New(apierr.Forbidden, "this route needs the %s role, and the token grants %s%s", role, id.Role, a.jwtRoleHint(role))
}

// IsOperator reports whether r may make operator calls: auth is off, or r
// carries an operator credential. A handler after Check reads it from the
// identity Check stored in the request's context.
func (a *Authenticator) IsOperator(r *http.Request) bool {
	if id, ok := FromContext(r.Context()); ok {
		return id.Role >= Operator
	}
	id, err := a.Identify(r)
	return err == nil && id.Role >= Operator
}

// OperatorNeeded is the Forbidden error for a caller without the operator
// role; why says what the operation would do.
func (a *Authenticator) OperatorNeeded(why string) error {
	if a.cfg.OperatorToken == "" && a.jwt == nil {
		return apierr.New(apierr.Forbidden, "%s and needs an operator token, but none is configured: set LETHE_OPERATOR_TOKEN on the server", why)
	}
	return apierr.New(apierr.Forbidden, "%s and needs the operator role (Authorization: Bearer <LETHE_OPERATOR_TOKEN>%s)", why, a.jwtRoleHint(Operator))
}

// credentials names what the server accepts, for error messages.
func (a *Authenticator) credentials() string {
	var out []string
	if a.cfg.Token != "" {
		out = append(out, "LETHE_AUTH_TOKEN")
	}
	if a.cfg.OperatorToken != "" {
		out = append(out, "LETHE_OPERATOR_TOKEN")
	}
	if a.jwt != nil {
		out = append(out, "a JWT the server verifies (JWT_ENABLED)")
	}
	return strings.Join(out, " or ")
}

// jwtRoleHint names the JWT role value that grants role.
func (a *Authenticator) jwtRoleHint(role Role) string {
	if a.jwt == nil {
		return ""
	}
	return ", or a JWT whose role is " + a.jwt.roleValue(role)
}

type identityKey struct{}

// WithIdentity stores id in ctx for the handlers after Check.
func WithIdentity(ctx context.Context, id Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// FromContext is the identity Check found for the request.
func FromContext(ctx context.Context) (Identity, bool) {
	id, ok := ctx.Value(identityKey{}).(Identity)
	return id, ok
}

// bearer is the request's token: Authorization: Bearer <token> (any case),
// or, as Queen accepts, the bare token.
func bearer(r *http.Request) string {
	h := strings.TrimSpace(r.Header.Get("Authorization"))
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return h
}

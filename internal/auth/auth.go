// Package auth is lethe's optional bearer-token authentication: a plain
// token for producers and consumers, an operator token for everything that
// can delete or skip data. With both tokens empty it is off.
package auth

import (
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/lethe-mq/lethe/internal/apierr"
)

// Role is what a route needs from its caller.
type Role int

const (
	// Public routes need no token: health and metrics.
	Public Role = iota
	// Client routes need the plain token (or the operator's): push, pop,
	// ack, transactions, lease extension, reads.
	Client
	// Operator routes need the operator token: everything that deletes or
	// skips data.
	Operator
)

func (r Role) String() string {
	switch r {
	case Public:
		return "public"
	case Client:
		return "token"
	case Operator:
		return "operator"
	}
	return "unknown"
}

// Tokens are the configured credentials.
type Tokens struct {
	Token         string // LETHE_AUTH_TOKEN: producers and consumers
	OperatorToken string // LETHE_OPERATOR_TOKEN: also operations that delete or skip data
}

// On reports whether authentication is on.
func (t Tokens) On() bool { return t.Token != "" || t.OperatorToken != "" }

// IsOperator reports whether r may make operator calls: auth is off, or r
// carries the operator token.
func (t Tokens) IsOperator(r *http.Request) bool {
	return !t.On() || tokenIs(bearer(r), t.OperatorToken)
}

// Check answers nil when r may call a route that needs role, else an
// Unauthorized or Forbidden error that says what to send.
func (t Tokens) Check(r *http.Request, role Role) error {
	if !t.On() || role == Public {
		return nil
	}
	got := bearer(r)
	if tokenIs(got, t.OperatorToken) {
		return nil
	}
	if !tokenIs(got, t.Token) {
		return apierr.New(apierr.Unauthorized, "missing or wrong bearer token: send Authorization: Bearer <LETHE_AUTH_TOKEN>")
	}
	if role == Operator {
		return t.OperatorNeeded("this operation deletes or skips data")
	}
	return nil
}

// OperatorNeeded is the Forbidden error for a caller without the operator
// token; why says what the operation would do.
func (t Tokens) OperatorNeeded(why string) error {
	if t.OperatorToken == "" {
		return apierr.New(apierr.Forbidden, "%s and needs an operator token, but none is configured: set LETHE_OPERATOR_TOKEN on the server", why)
	}
	return apierr.New(apierr.Forbidden, "%s and needs the operator token (Authorization: Bearer <LETHE_OPERATOR_TOKEN>)", why)
}

func bearer(r *http.Request) string {
	if t, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return strings.TrimSpace(t)
	}
	return ""
}

func tokenIs(got, want string) bool {
	return want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

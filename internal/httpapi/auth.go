package httpapi

import (
	"crypto/subtle"
	"net/http"
	"strings"
)

// Auth is optional bearer-token authentication. With both tokens empty it is
// off. With it on, every API call needs a token, and destructive operations
// (deleting queues, messages, consumer groups) need the operator's.
type Auth struct {
	Token         string // LETHE_AUTH_TOKEN: producers and consumers
	OperatorToken string // LETHE_OPERATOR_TOKEN: also destructive operations
}

func (a Auth) on() bool { return a.Token != "" || a.OperatorToken != "" }

// IsOperator reports whether r may make operator-only calls: auth is off, or
// r carries the operator token. Routes registered through Config.Extra use
// it where the server's RequireOperator is out of reach.
func (a Auth) IsOperator(r *http.Request) bool { return !a.on() || tokenIs(bearer(r), a.OperatorToken) }

func bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if t, ok := strings.CutPrefix(h, "Bearer "); ok {
		return strings.TrimSpace(t)
	}
	return ""
}

func tokenIs(got, want string) bool {
	return want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// requireToken guards every route but /health and the metrics.
func (s *Server) requireToken(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.auth.on() || r.URL.Path == "/health" || strings.HasPrefix(r.URL.Path, "/metrics") {
			next.ServeHTTP(w, r)
			return
		}
		t := bearer(r)
		if !tokenIs(t, s.auth.Token) && !tokenIs(t, s.auth.OperatorToken) {
			writeJSON(w, http.StatusUnauthorized, errorBody("missing or wrong bearer token: send Authorization: Bearer <LETHE_AUTH_TOKEN>"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// requireOperator answers 403 unless the caller holds the operator token (or
// auth is off). It reports whether the handler may go on.
func (s *Server) requireOperator(w http.ResponseWriter, r *http.Request) bool {
	if !s.auth.on() || tokenIs(bearer(r), s.auth.OperatorToken) {
		return true
	}
	msg := "this operation deletes data and needs the operator token (Authorization: Bearer <LETHE_OPERATOR_TOKEN>)"
	if s.auth.OperatorToken == "" {
		msg = "this operation deletes data and needs an operator token, but none is configured: set LETHE_OPERATOR_TOKEN on the server"
	}
	writeJSON(w, http.StatusForbidden, errorBody(msg))
	return false
}

// RequireOperator is requireOperator for routes other packages register.
func (s *Server) RequireOperator(w http.ResponseWriter, r *http.Request) bool {
	return s.requireOperator(w, r)
}

// Package apierr is the one vocabulary of failure for lethe's HTTP surface:
// a few kinds of error, and the one map from kind to HTTP status that every
// handler uses. Packages below the HTTP layer wrap a kind ("%w") to say what
// went wrong in the caller's terms; the HTTP layer asks KindOf and Status.
package apierr

import (
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Kind is a class of failure. A Kind is itself an error, so code can wrap
// it (fmt.Errorf("%w: ...", apierr.Invalid)) and test it with errors.Is.
type Kind int

// The kinds. Internal is the zero value: an error nobody classified is the
// server's fault.
const (
	Internal         Kind = iota // 500: a bug or an unexpected failure
	Invalid                      // 400: the request is malformed or out of range
	Unauthorized                 // 401: no token, or a wrong one
	Forbidden                    // 403: a valid token without the needed role
	NotFound                     // 404: the named thing does not exist
	MethodNotAllowed             // 405: the path is served, not for this method
	Conflict                     // 409: the state does not allow the request
	TooLarge                     // 413: a body or payload over its limit
	Unavailable                  // 503: the database is unreachable, or the replica is at a limit
	Canceled                     // 499: the caller went away before the answer
)

// statusClientClosedRequest is the status recorded (in metrics and logs)
// for a request whose caller went away; nobody receives it.
const statusClientClosedRequest = 499

// RetryAfterDefault is the Retry-After of an Unavailable answer that names
// no other.
const RetryAfterDefault = 5 * time.Second

var kinds = [...]struct {
	status int
	text   string
}{
	Internal:         {http.StatusInternalServerError, "internal error"},
	Invalid:          {http.StatusBadRequest, "invalid request"},
	Unauthorized:     {http.StatusUnauthorized, "unauthorized"},
	Forbidden:        {http.StatusForbidden, "forbidden"},
	NotFound:         {http.StatusNotFound, "not found"},
	MethodNotAllowed: {http.StatusMethodNotAllowed, "method not allowed"},
	Conflict:         {http.StatusConflict, "conflict"},
	TooLarge:         {http.StatusRequestEntityTooLarge, "too large"},
	Unavailable:      {http.StatusServiceUnavailable, "unavailable"},
	Canceled:         {statusClientClosedRequest, "request canceled"},
}

// Status is the HTTP status of the kind: the only map from kinds to
// statuses in lethe.
func (k Kind) Status() int {
	if k < 0 || int(k) >= len(kinds) {
		return http.StatusInternalServerError
	}
	return kinds[k].status
}

func (k Kind) Error() string {
	if k < 0 || int(k) >= len(kinds) {
		return "internal error"
	}
	return kinds[k].text
}

// Error is a classified error that names the request field at fault and,
// for Unavailable, when to retry.
type Error struct {
	Kind  Kind
	Field string // the request field at fault, e.g. "items[3].queue"; may be empty
	Msg   string // what is wrong, for a person: "queue must not be blank"
	// RetryAfter overrides RetryAfterDefault for Unavailable.
	RetryAfter time.Duration
}

func (e *Error) Error() string { return e.Kind.Error() + ": " + e.Msg }

// Unwrap makes errors.Is(err, e.Kind) hold.
func (e *Error) Unwrap() error { return e.Kind }

// New is an *Error of kind k with a formatted message.
func New(k Kind, format string, args ...any) error {
	return &Error{Kind: k, Msg: fmt.Sprintf(format, args...)}
}

// Field is an *Error of kind k that names the field at fault. The message
// should name the field too, so it reads on its own.
func Field(k Kind, field, format string, args ...any) error {
	return &Error{Kind: k, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// FieldOf returns the field named by err's *Error, if any.
func FieldOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Field
	}
	return ""
}

// RetryAfterOf returns when the caller should retry after err.
func RetryAfterOf(err error) time.Duration {
	var e *Error
	if errors.As(err, &e) && e.RetryAfter > 0 {
		return e.RetryAfter
	}
	return RetryAfterDefault
}

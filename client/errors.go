package client

import (
	"errors"
	"fmt"
	"net/http"
)

// APIError is a non-2xx answer from the server.
type APIError struct {
	StatusCode int
	// Message is the server's {"error": ...} text, or the body itself when
	// it is not that JSON shape.
	Message string
}

func (e *APIError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.StatusCode)
	}
	return fmt.Sprintf("lethe answered %d: %s", e.StatusCode, msg)
}

// Temporary reports whether trying again later may succeed: the server
// failed (5xx), not the request.
func (e *APIError) Temporary() bool { return e.StatusCode >= 500 }

// IsNotFound reports whether err is a 404 from the server.
func IsNotFound(err error) bool {
	var apiErr *APIError
	return errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusNotFound
}

var (
	// ErrAckRejected is returned by Ack when the server answered but did not
	// apply the acknowledgement (lease lost, unknown transaction...).
	ErrAckRejected = errors.New("ack rejected")
	// ErrTransactionAborted is returned by Transaction when the server
	// rolled the whole transaction back; the response says why.
	ErrTransactionAborted = errors.New("transaction aborted")
	// ErrLeaseNotExtended is returned by ExtendLease when the server
	// answered without extending.
	ErrLeaseNotExtended = errors.New("lease not extended")
)

// IsUnreachable reports whether err is a request that got no answer at all:
// the server is down, the address is wrong, or the connection broke.
func IsUnreachable(err error) bool {
	var te *transportError
	return errors.As(err, &te)
}

package httpapi

import (
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/apierr"
)

// errPanic is what a request that panicked fails with.
var errPanic = errors.New("handler panicked")

// writeJSON answers v as JSON with status; every JSON answer but the
// hand-encoded push and pop results (encode.go) goes through it.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// fail answers err with the status of its kind (apierr: the one map) and
// {"error", "field", "requestId"}. A 5xx body says only what kind of
// failure it was; the full error goes to the log under the request id. A
// 4xx body says what to fix, unless the error came from the database
// driver, whose text may hold SQL or names of hosts and users.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	kind := apierr.KindOf(err)
	status := kind.Status()
	body := api.Error{RequestID: requestID(r)}
	switch {
	case kind == apierr.Canceled:
		s.log.Debug("request canceled by its caller", "request_id", body.RequestID, "method", r.Method, "path", r.URL.Path)
		body.Error = "request canceled"
	case status >= 500:
		s.log.Error("request failed", "request_id", body.RequestID, "method", r.Method, "path", r.URL.Path,
			"status", status, "error", err)
		body.Error = serverMessage(kind, err, body.RequestID)
		if kind == apierr.Unavailable {
			w.Header().Set("Retry-After", retryAfterHeader(apierr.RetryAfterOf(err)))
		}
	case fromDriver(err):
		s.log.Warn("request refused by the database", "request_id", body.RequestID, "method", r.Method,
			"path", r.URL.Path, "status", status, "error", err)
		body.Error = kind.Error() + ": a value in the request cannot be stored (request id " + body.RequestID + ")"
	default:
		body.Error = err.Error()
		body.Field = apierr.FieldOf(err)
	}
	if bodyUnread(r) {
		// Refused before its body was read (a wrong credential, no room
		// under the bound, a bad path): close the connection after the
		// answer rather than wait for the rest of a body nobody will
		// read, which net/http would otherwise drain to reuse it.
		w.Header().Set("Connection", "close")
	}
	writeJSON(w, status, body)
}

// serverMessage is the body of a 5xx answer: lethe's own words for a
// condition it raised itself (a limit), else a generic message.
func serverMessage(kind apierr.Kind, err error, id string) string {
	var own *apierr.Error
	if errors.As(err, &own) && own.Kind == kind && !fromDriver(err) {
		return err.Error() + " (request id " + id + ")"
	}
	if kind == apierr.Unavailable {
		return "the database is unavailable; retry later (request id " + id + ")"
	}
	return "internal error; the server log has the details under request id " + id
}

// fromDriver reports errors whose text comes from PostgreSQL or the driver.
func fromDriver(err error) bool {
	var pgErr *pgconn.PgError
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	return errors.As(err, &pgErr) || errors.As(err, &connectErr) || errors.As(err, &netErr)
}

// retryAfterHeader formats d in whole seconds, at least 1; zero means the
// default.
func retryAfterHeader(d time.Duration) string {
	if d <= 0 {
		d = apierr.RetryAfterDefault
	}
	return strconv.Itoa(max(1, int((d+time.Second-1)/time.Second)))
}

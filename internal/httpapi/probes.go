package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/auth"
	"github.com/lethe-mq/lethe/internal/schema"
	"github.com/lethe-mq/lethe/internal/version"
)

// AuthNoneWarning is what /health and the start-up log say with
// LETHE_AUTH=none.
const AuthNoneWarning = "authentication is off (LETHE_AUTH=none): every caller that reaches this port is an operator and can delete data"

// readyTimeout bounds /ready's database work, so a probe gets an answer
// while the database hangs.
const readyTimeout = 2 * time.Second

// health is the liveness probe: the process serves HTTP. It makes no
// database call, so a liveness probe does not restart lethe during a
// database outage; /ready says whether the database can be used.
func (s *Server) health(w http.ResponseWriter, _ *http.Request) error {
	h := api.Health{Status: "healthy", Engine: "lethe", Version: version.String(),
		UptimeSeconds: int64(time.Since(s.started).Seconds()), Auth: s.auth.Posture()}
	if h.Auth == auth.PostureNone {
		h.Warning = AuthNoneWarning
	}
	writeJSON(w, http.StatusOK, h)
	return nil
}

// ready is the readiness probe: the database answers and holds every
// migration this binary carries. 503 with Retry-After otherwise.
func (s *Server) ready(w http.ResponseWriter, r *http.Request) error {
	ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
	defer cancel()
	st, err := schema.Check(ctx, s.eng.Pool())
	if err != nil {
		s.log.Warn("readiness check: database unreachable", "request_id", requestID(r), "error", err)
		s.notReady(w, r, api.Ready{Status: "not ready", Database: "unreachable",
			Reason: "the database does not answer; lethe retries it on every request"})
		return nil
	}
	body := api.Ready{Status: "ready", Database: "connected", Version: version.String(),
		SchemaVersion: st.Applied, BinarySchemaVersion: st.Latest, MissingMigrations: st.Missing,
		UnknownMigrations: st.Unknown}
	if !st.Ready() {
		body.Status = "not ready"
		lacks := fmt.Sprintf("migrations %v", st.Missing)
		if len(st.Missing) == 0 {
			lacks = "the stored functions"
		} else if st.FunctionsMissing {
			lacks += " and the stored functions"
		}
		body.Reason = "the database lacks " + lacks + " of this binary: start lethe once with rights to migrate " +
			"(it migrates at start)"
		s.notReady(w, r, body)
		return nil
	}
	writeJSON(w, http.StatusOK, body)
	return nil
}

func (s *Server) notReady(w http.ResponseWriter, r *http.Request, body api.Ready) {
	body.RequestID = requestID(r)
	w.Header().Set("Retry-After", retryAfterHeader(0))
	writeJSON(w, http.StatusServiceUnavailable, body)
}

package maintenance

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/lethe-mq/lethe/api"
)

// requestTimeout bounds the database work of one maintenance call.
const requestTimeout = 5 * time.Second

// maxBodyBytes bounds a POST body; {"enabled": false} is 18 bytes.
const maxBodyBytes = 4 << 10

// PushStatus answers GET and POST /api/v1/system/maintenance.
type PushStatus struct {
	Enabled bool `json:"enabled"`
	// MaintenanceMode repeats Enabled under Queen's name.
	MaintenanceMode  bool  `json:"maintenanceMode"`
	BufferedMessages int64 `json:"bufferedMessages"`
	// BufferHealthy is false after a failed append or replay.
	BufferHealthy bool `json:"bufferHealthy"`
}

// PopStatus answers GET and POST /api/v1/system/maintenance/pop.
type PopStatus struct {
	Enabled bool `json:"enabled"`
	// PopMaintenanceMode repeats Enabled under Queen's name.
	PopMaintenanceMode bool `json:"popMaintenanceMode"`
}

// setRequest is the body of both POSTs; enabled is required.
type setRequest struct {
	Enabled *bool `json:"enabled"`
}

// Routes registers the maintenance endpoints; it goes into
// httpapi.Config.Extra, behind the server's token check.
func (s *Service) Routes(mux *http.ServeMux) {
	mux.HandleFunc("GET /api/v1/system/maintenance", s.getPush)
	mux.HandleFunc("POST /api/v1/system/maintenance", s.setPushHTTP)
	mux.HandleFunc("GET /api/v1/system/maintenance/pop", s.getPop)
	mux.HandleFunc("POST /api/v1/system/maintenance/pop", s.setPopHTTP)
}

func (s *Service) pushStatus() PushStatus {
	on := s.push.Load()
	return PushStatus{Enabled: on, MaintenanceMode: on, BufferedMessages: s.buf.count(), BufferHealthy: s.healthy.Load()}
}

func (s *Service) popStatus() PopStatus {
	on := s.pop.Load()
	return PopStatus{Enabled: on, PopMaintenanceMode: on}
}

// GETs read the database, so any replica answers the shared state at once
// (and adopts it) rather than its up-to-a-second-old copy.
func (s *Service) getPush(w http.ResponseWriter, r *http.Request) {
	if !s.refreshFor(w, r) {
		return
	}
	writeJSON(w, http.StatusOK, s.pushStatus())
}

func (s *Service) getPop(w http.ResponseWriter, r *http.Request) {
	if !s.refreshFor(w, r) {
		return
	}
	writeJSON(w, http.StatusOK, s.popStatus())
}

func (s *Service) setPushHTTP(w http.ResponseWriter, r *http.Request) {
	if s.setFor(w, r, s.SetPush) {
		writeJSON(w, http.StatusOK, s.pushStatus())
	}
}

func (s *Service) setPopHTTP(w http.ResponseWriter, r *http.Request) {
	if s.setFor(w, r, s.SetPop) {
		writeJSON(w, http.StatusOK, s.popStatus())
	}
}

func (s *Service) refreshFor(w http.ResponseWriter, r *http.Request) bool {
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	if err := s.Refresh(ctx); err != nil {
		s.log.Error("maintenance: read switches", "error", err)
		writeError(w, http.StatusServiceUnavailable, "cannot read the maintenance state from PostgreSQL: "+err.Error())
		return false
	}
	return true
}

// setFor checks the caller, decodes {"enabled": bool} and applies it with
// set. It reports whether the change was made; otherwise it has answered.
func (s *Service) setFor(w http.ResponseWriter, r *http.Request, set func(context.Context, bool) error) bool {
	if !s.cfg.Auth.IsOperator(r) {
		msg := "changing maintenance mode needs the operator token (Authorization: Bearer <LETHE_OPERATOR_TOKEN>)"
		if s.cfg.Auth.OperatorToken == "" {
			msg = "changing maintenance mode needs an operator token, but none is configured: set LETHE_OPERATOR_TOKEN on the server"
		}
		writeError(w, http.StatusForbidden, msg)
		return false
	}
	req, msg := decodeSet(w, r)
	if msg != "" {
		writeError(w, http.StatusBadRequest, msg)
		return false
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	if err := set(ctx, *req.Enabled); err != nil {
		s.log.Error("maintenance: change switch", "path", r.URL.Path, "error", err)
		writeError(w, http.StatusServiceUnavailable, "cannot store the maintenance state in PostgreSQL: "+err.Error())
		return false
	}
	return true
}

// decodeSet reads the body; a non-empty message says what is wrong with it.
func decodeSet(w http.ResponseWriter, r *http.Request) (setRequest, string) {
	const want = `send a JSON body {"enabled": true} or {"enabled": false}`
	var req setRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	err := dec.Decode(&req)
	var maxErr *http.MaxBytesError
	switch {
	case errors.Is(err, io.EOF):
		return req, "request body is empty; " + want
	case errors.As(err, &maxErr):
		return req, "request body is too large; " + want
	case err != nil:
		return req, "malformed body (" + err.Error() + "); " + want
	case dec.More():
		return req, "request body holds more than one JSON value; " + want
	case req.Enabled == nil:
		return req, `"enabled" is missing; ` + want
	}
	return req, ""
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, api.Error{Error: msg})
}

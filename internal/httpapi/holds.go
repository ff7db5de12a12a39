package httpapi

import (
	"net/http"
	"strconv"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/apierr"
	"github.com/lethe-mq/lethe/internal/auth"
)

// actor names who made a request, for the holds' audit: the token's
// subject, else its role ("operator" with authentication off, which
// grants every request that role).
func actor(r *http.Request) string {
	id, ok := auth.FromContext(r.Context())
	switch {
	case ok && id.Subject != "":
		return id.Subject
	case ok && id.Authenticated:
		return id.Role.String()
	}
	return "anonymous"
}

func (s *Server) listHolds(w http.ResponseWriter, r *http.Request) error {
	q, err := query(r)
	if err != nil {
		return err
	}
	names, err := queryNames(q, "queue")
	if err != nil {
		return err
	}
	released, err := boolParam(q.Get("released"), "released", false)
	if err != nil {
		return err
	}
	holds, err := s.holds.List(r.Context(), names["queue"], released)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"holds": holds})
	return nil
}

func (s *Server) placeHold(w http.ResponseWriter, r *http.Request) error {
	var req api.PlaceHoldRequest
	if err := s.decode(w, r, &req); err != nil {
		return err
	}
	h, err := s.holds.Place(r.Context(), req.Queue, req.Reason, actor(r))
	if err != nil {
		return err
	}
	s.log.Info("retention hold placed over HTTP", "request_id", requestID(r), "queue", h.Queue, "hold", h.ID)
	writeJSON(w, http.StatusCreated, h)
	return nil
}

func (s *Server) releaseHold(w http.ResponseWriter, r *http.Request) error {
	raw, err := pathID(r, "id")
	if err != nil {
		return err
	}
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id < 1 {
		return apierr.Field(apierr.Invalid, "id", "hold id must be a positive whole number (the id field of GET /api/v1/retention/holds), got %q", raw)
	}
	h, err := s.holds.Release(r.Context(), id, actor(r))
	if err != nil {
		return err
	}
	s.log.Info("retention hold released over HTTP", "request_id", requestID(r), "queue", h.Queue, "hold", h.ID)
	writeJSON(w, http.StatusOK, h)
	return nil
}

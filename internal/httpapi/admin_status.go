package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/lethe-mq/lethe/internal/engine"
)

// Version is what GET /api/v1/status reports.
const Version = "lethe dev"

func (s *Server) overview(w http.ResponseWriter, r *http.Request) {
	o, err := s.eng.Overview(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, o)
}

func (s *Server) namespaces(w http.ResponseWriter, r *http.Request) {
	s.tagList(w, r, "namespaces", s.eng.Namespaces)
}

func (s *Server) tasks(w http.ResponseWriter, r *http.Request) {
	s.tagList(w, r, "tasks", s.eng.Tasks)
}

func (s *Server) tagList(w http.ResponseWriter, r *http.Request, key string,
	list func(ctx context.Context, page engine.Page) ([]engine.TagSummary, int64, error)) {
	page, err := pageParams(r.URL.Query())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	items, total, err := list(r.Context(), page)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if items == nil {
		items = []engine.TagSummary{}
	}
	writeJSON(w, http.StatusOK, map[string]any{key: items, "total": total})
}

type statusResponse struct {
	Version       string    `json:"version"`
	StartedAt     time.Time `json:"startedAt"`
	UptimeSeconds int64     `json:"uptimeSeconds"`
	Time          time.Time `json:"time"`
	*engine.Overview
}

func (s *Server) status(w http.ResponseWriter, r *http.Request) {
	o, err := s.eng.Overview(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, statusResponse{Version: Version, StartedAt: s.started.UTC(),
		UptimeSeconds: int64(time.Since(s.started).Seconds()), Time: s.eng.Clock().Now(), Overview: o})
}

func (s *Server) queueStatuses(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("includePartitions") != "" {
		s.fail(w, r, fmt.Errorf("%w: includePartitions is only supported on GET /api/v1/status/queues/{queue}", engine.ErrInvalid))
		return
	}
	page, err := pageParams(q)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	qs, total, err := s.eng.QueueStatuses(r.Context(), q.Get("namespace"), q.Get("task"), page)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if qs == nil {
		qs = []engine.QueueStatus{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"queues": qs, "total": total,
		"pagination": map[string]int{"limit": page.Limit, "offset": page.Offset}})
}

// queueStatus serves one queue; with includePartitions, limit and offset
// page its partitions.
func (s *Server) queueStatus(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	include, err := boolParam(q.Get("includePartitions"), "includePartitions", false)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	page, err := pageParams(q)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	d, err := s.eng.QueueStatus(r.Context(), r.PathValue("queue"), include, page)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

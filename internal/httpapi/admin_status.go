package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/apierr"
	"github.com/lethe-mq/lethe/internal/inspect"
	"github.com/lethe-mq/lethe/internal/version"
)

func (s *Server) overview(w http.ResponseWriter, r *http.Request) error {
	o, err := s.inspect.Overview(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, o)
	return nil
}

func (s *Server) namespaces(w http.ResponseWriter, r *http.Request) error {
	return s.tagList(w, r, "namespaces", s.inspect.Namespaces)
}

func (s *Server) tasks(w http.ResponseWriter, r *http.Request) error {
	return s.tagList(w, r, "tasks", s.inspect.Tasks)
}

func (s *Server) tagList(w http.ResponseWriter, r *http.Request, key string,
	list func(ctx context.Context, page inspect.Page) ([]api.TagSummary, int64, error)) error {
	q, err := query(r)
	if err != nil {
		return err
	}
	page, err := pageParams(q)
	if err != nil {
		return err
	}
	items, total, err := list(r.Context(), page)
	if err != nil {
		return err
	}
	if items == nil {
		items = []api.TagSummary{}
	}
	writeJSON(w, http.StatusOK, map[string]any{key: items, "total": total})
	return nil
}

type statusResponse struct {
	Version       string    `json:"version"`
	StartedAt     time.Time `json:"startedAt"`
	UptimeSeconds int64     `json:"uptimeSeconds"`
	Time          time.Time `json:"time"`
	*api.Overview
}

func (s *Server) status(w http.ResponseWriter, r *http.Request) error {
	o, err := s.inspect.Overview(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, statusResponse{Version: "lethe " + version.String(), StartedAt: s.started.UTC(),
		UptimeSeconds: int64(time.Since(s.started).Seconds()), Time: s.eng.Clock().Now(), Overview: o})
	return nil
}

func (s *Server) queueStatuses(w http.ResponseWriter, r *http.Request) error {
	q, err := query(r)
	if err != nil {
		return err
	}
	if q.Get("includePartitions") != "" {
		return apierr.Field(apierr.Invalid, "includePartitions", "includePartitions is only supported on GET /api/v1/status/queues/{queue}")
	}
	names, err := queryNames(q, "namespace", "task")
	if err != nil {
		return err
	}
	page, err := pageParams(q)
	if err != nil {
		return err
	}
	qs, total, err := s.inspect.QueueStatuses(r.Context(), names["namespace"], names["task"], page)
	if err != nil {
		return err
	}
	if qs == nil {
		qs = []api.QueueStatus{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"queues": qs, "total": total,
		"pagination": map[string]int{"limit": page.Limit, "offset": page.Offset}})
	return nil
}

// queueStatus serves one queue; with includePartitions, limit and offset
// page its partitions.
func (s *Server) queueStatus(w http.ResponseWriter, r *http.Request) error {
	name, err := pathName(r, "queue")
	if err != nil {
		return err
	}
	q, err := query(r)
	if err != nil {
		return err
	}
	include, err := boolParam(q.Get("includePartitions"), "includePartitions", false)
	if err != nil {
		return err
	}
	page, err := pageParams(q)
	if err != nil {
		return err
	}
	d, err := s.inspect.QueueStatus(r.Context(), name, include, page)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, d)
	return nil
}

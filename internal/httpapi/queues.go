package httpapi

import (
	"net/http"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/validate"
)

func (s *Server) configure(w http.ResponseWriter, r *http.Request) error {
	var req api.ConfigureRequest
	if err := s.decode(w, r, &req); err != nil {
		return err
	}
	if err := validate.Name("queue", req.Queue); err != nil {
		return err
	}
	if err := validateName("namespace", req.Namespace); err != nil {
		return err
	}
	if err := validateName("task", req.Task); err != nil {
		return err
	}
	if err := s.mayConfigure(r, req); err != nil {
		return err
	}
	resp, err := s.queues.ConfigureGuarded(r.Context(), req, s.shortenGuard(r))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}

func (s *Server) listQueues(w http.ResponseWriter, r *http.Request) error {
	q, err := query(r)
	if err != nil {
		return err
	}
	names, err := queryNames(q, "namespace", "task")
	if err != nil {
		return err
	}
	qs, err := s.queues.List(r.Context(), names["namespace"], names["task"])
	if err != nil {
		return err
	}
	if qs == nil {
		qs = []*api.Queue{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"queues": qs, "total": len(qs)})
	return nil
}

func (s *Server) getQueue(w http.ResponseWriter, r *http.Request) error {
	name, err := pathName(r, "queue")
	if err != nil {
		return err
	}
	q, err := s.queues.Get(r.Context(), name)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, q)
	return nil
}

func (s *Server) deleteQueue(w http.ResponseWriter, r *http.Request) error {
	name, err := pathName(r, "queue")
	if err != nil {
		return err
	}
	n, err := s.eng.DeleteQueue(r.Context(), name)
	if err != nil {
		return err
	}
	s.log.Info("queue deleted", "request_id", requestID(r), "queue", name, "segments_deleted", n)
	writeJSON(w, http.StatusOK, map[string]any{"deleted": true, "queue": name, "segmentsDeleted": n})
	return nil
}

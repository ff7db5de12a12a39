package httpapi

import (
	"net/http"

	"github.com/lethe-mq/lethe/api"
	"github.com/lethe-mq/lethe/internal/engine"
)

func (s *Server) configure(w http.ResponseWriter, r *http.Request) {
	var req api.ConfigureRequest
	if err := s.decode(w, r, &req); err != nil {
		s.fail(w, r, err)
		return
	}
	resp, err := s.eng.Configure(r.Context(), req)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

func (s *Server) listQueues(w http.ResponseWriter, r *http.Request) {
	qs, err := s.eng.ListQueues(r.Context(), r.URL.Query().Get("namespace"), r.URL.Query().Get("task"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if qs == nil {
		qs = []*engine.QueueInfo{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"queues": qs, "total": len(qs)})
}

func (s *Server) getQueue(w http.ResponseWriter, r *http.Request) {
	q, err := s.eng.GetQueue(r.Context(), r.PathValue("queue"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, q)
}

func (s *Server) deleteQueue(w http.ResponseWriter, r *http.Request) {
	if !s.requireOperator(w, r) {
		return
	}
	name := r.PathValue("queue")
	n, err := s.eng.DeleteQueue(r.Context(), name)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.log.Info("queue deleted", "queue", name, "segments_deleted", n)
	writeJSON(w, http.StatusOK, map[string]any{"deleted": true, "queue": name, "segmentsDeleted": n})
}

package httpapi

import (
	"fmt"
	"net/http"

	"github.com/lethe-mq/lethe/internal/engine"
)

func (s *Server) listMessages(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := engine.MessageFilter{Queue: q.Get("queue"), Partition: q.Get("partition"), Status: q.Get("status")}
	var err error
	if f.Page, f.From, f.To, err = listParams(q); err != nil {
		s.fail(w, r, err)
		return
	}
	page, err := s.eng.BrowseMessages(r.Context(), f)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, page)
}

func (s *Server) getMessage(w http.ResponseWriter, r *http.Request) {
	m, err := s.eng.GetMessage(r.Context(), r.PathValue("partitionId"), r.PathValue("transactionId"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, m)
}

// deleteMessage refuses: lethe stores messages inside segments and deletes
// whole segments only, so one message cannot be cut out.
func (s *Server) deleteMessage(w http.ResponseWriter, r *http.Request) {
	if !s.requireOperator(w, r) {
		return
	}
	s.fail(w, r, fmt.Errorf("%w: lethe cannot delete a single message: messages are stored in segments of a log and only whole segments are removed, by retention. "+
		"To stop a consumer group from receiving it, ack it (or ack it with status dlq), or move the group past it with "+
		"POST /api/v1/consumer-groups/{group}/queues/{queue}/seek; to remove old messages, configure retentionSeconds on the queue",
		engine.ErrConflict))
}

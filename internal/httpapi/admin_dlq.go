package httpapi

import (
	"net/http"

	"github.com/lethe-mq/lethe/internal/engine"
)

func (s *Server) listDeadLetters(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := engine.DeadLetterFilter{Queue: q.Get("queue"), Group: q.Get("consumerGroup"), Partition: q.Get("partition")}
	var err error
	if f.Page, f.From, f.To, err = listParams(q); err != nil {
		s.fail(w, r, err)
		return
	}
	msgs, total, err := s.eng.DeadLetters(r.Context(), f)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if msgs == nil {
		msgs = []engine.DeadLetter{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"messages": msgs, "total": total, "limit": f.Limit, "offset": f.Offset})
}

func (s *Server) deleteDeadLetter(w http.ResponseWriter, r *http.Request) {
	if !s.requireOperator(w, r) {
		return
	}
	id, err := engine.ParseDeadLetterID(r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if err := s.eng.DeleteDeadLetter(r.Context(), id); err != nil {
		s.fail(w, r, err)
		return
	}
	s.log.Info("dead letter deleted", "dead_letter_id", id)
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "id": r.PathValue("id")})
}

func (s *Server) replayDeadLetter(w http.ResponseWriter, r *http.Request) {
	id, err := engine.ParseDeadLetterID(r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	res, err := s.eng.ReplayDeadLetter(r.Context(), id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.log.Info("dead letter replayed", "dead_letter_id", id, "queue", res.Queue, "partition", res.Partition,
		"transaction_id", res.TransactionID)
	writeJSON(w, http.StatusOK, res)
}

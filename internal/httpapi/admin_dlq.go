package httpapi

import (
	"net/http"

	"github.com/lethe-mq/lethe/internal/engine"
	"github.com/lethe-mq/lethe/internal/inspect"
)

func (s *Server) listDeadLetters(w http.ResponseWriter, r *http.Request) error {
	q, err := query(r)
	if err != nil {
		return err
	}
	names, err := queryNames(q, "queue", "consumerGroup", "partition")
	if err != nil {
		return err
	}
	f := inspect.DeadLetterFilter{Queue: names["queue"], Group: names["consumerGroup"], Partition: names["partition"]}
	if f.Page, f.From, f.To, err = listParams(q); err != nil {
		return err
	}
	page, err := s.inspect.DeadLetters(r.Context(), f)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

func (s *Server) deleteDeadLetter(w http.ResponseWriter, r *http.Request) error {
	raw, err := pathID(r, "id")
	if err != nil {
		return err
	}
	id, err := engine.ParseDeadLetterID(raw)
	if err != nil {
		return err
	}
	if err := s.eng.DeleteDeadLetter(r.Context(), id); err != nil {
		return err
	}
	s.log.Info("dead letter deleted", "request_id", requestID(r), "dead_letter_id", id)
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "id": raw})
	return nil
}

func (s *Server) replayDeadLetter(w http.ResponseWriter, r *http.Request) error {
	raw, err := pathID(r, "id")
	if err != nil {
		return err
	}
	id, err := engine.ParseDeadLetterID(raw)
	if err != nil {
		return err
	}
	if err := s.refuseWhilePushesBuffer("replaying a dead letter"); err != nil {
		return err
	}
	res, err := s.eng.ReplayDeadLetter(r.Context(), id)
	if err != nil {
		return err
	}
	s.log.Info("dead letter replayed", "request_id", requestID(r), "dead_letter_id", id, "queue", res.Queue,
		"partition", res.Partition, "transaction_id", res.TransactionID)
	writeJSON(w, http.StatusOK, res)
	return nil
}

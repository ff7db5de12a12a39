package httpapi

import (
	"net/http"

	"github.com/lethe-mq/lethe/internal/apierr"
	"github.com/lethe-mq/lethe/internal/inspect"
)

func (s *Server) listMessages(w http.ResponseWriter, r *http.Request) error {
	q, err := query(r)
	if err != nil {
		return err
	}
	names, err := queryNames(q, "queue", "partition")
	if err != nil {
		return err
	}
	f := inspect.MessageFilter{Queue: names["queue"], Partition: names["partition"], Status: q.Get("status")}
	if f.Page, f.From, f.To, err = listParams(q); err != nil {
		return err
	}
	page, err := s.inspect.BrowseMessages(r.Context(), f)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

func (s *Server) getMessage(w http.ResponseWriter, r *http.Request) error {
	partitionID, err := pathID(r, "partitionId")
	if err != nil {
		return err
	}
	txnID, err := pathID(r, "transactionId")
	if err != nil {
		return err
	}
	m, err := s.inspect.GetMessage(r.Context(), partitionID, txnID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, m)
	return nil
}

// deleteMessage refuses: lethe stores messages inside segments and deletes
// whole segments only, so one message cannot be cut out.
func (s *Server) deleteMessage(w http.ResponseWriter, r *http.Request) error {
	if _, err := pathID(r, "partitionId"); err != nil {
		return err
	}
	if _, err := pathID(r, "transactionId"); err != nil {
		return err
	}
	return apierr.New(apierr.Conflict, "lethe cannot delete a single message: messages are stored in segments of a log and only whole segments are removed, by retention. "+
		"To stop a consumer group from receiving it, ack it (or ack it with status dlq), or move the group past it with "+
		"POST /api/v1/consumer-groups/{group}/queues/{queue}/seek; to remove old messages, configure retentionSeconds on the queue")
}

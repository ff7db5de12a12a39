package httpapi

import (
	"net/http"

	"github.com/lethe-mq/lethe/internal/apierr"
)

func (s *Server) listConsumerGroups(w http.ResponseWriter, r *http.Request) error {
	q, err := query(r)
	if err != nil {
		return err
	}
	page, err := pageParams(q)
	if err != nil {
		return err
	}
	groups, total, err := s.inspect.ConsumerGroups(r.Context(), page)
	if err != nil {
		return err
	}
	writeList(w, total, groups)
	return nil
}

func (s *Server) laggingConsumerGroups(w http.ResponseWriter, r *http.Request) error {
	q, err := query(r)
	if err != nil {
		return err
	}
	page, err := pageParams(q)
	if err != nil {
		return err
	}
	// Queen's default: an hour.
	minLag, err := intParam(q.Get("minLagSeconds"), "minLagSeconds", 3600)
	if err != nil {
		return err
	}
	if minLag < 0 {
		return apierr.Field(apierr.Invalid, "minLagSeconds", "query parameter minLagSeconds must be 0 or more, got %d", minLag)
	}
	rows, total, err := s.inspect.LaggingPartitions(r.Context(), int64(minLag), page)
	if err != nil {
		return err
	}
	writeList(w, total, rows)
	return nil
}

func (s *Server) getConsumerGroup(w http.ResponseWriter, r *http.Request) error {
	group, err := pathName(r, "group")
	if err != nil {
		return err
	}
	q, err := query(r)
	if err != nil {
		return err
	}
	page, err := pageParams(q)
	if err != nil {
		return err
	}
	byQueue, total, err := s.inspect.ConsumerGroup(r.Context(), group, page)
	if err != nil {
		return err
	}
	writeList(w, total, byQueue)
	return nil
}

// deleteConsumerGroup serves DELETE /consumer-groups/{group} and
// DELETE /consumer-groups/{group}/queues/{queue}. deleteMetadata defaults
// to true, as in Queen.
func (s *Server) deleteConsumerGroup(w http.ResponseWriter, r *http.Request) error {
	group, err := pathName(r, "group")
	if err != nil {
		return err
	}
	if err := checkPathNames(r, "queue"); err != nil {
		return err
	}
	q, err := query(r)
	if err != nil {
		return err
	}
	deleteMetadata, err := boolParam(q.Get("deleteMetadata"), "deleteMetadata", true)
	if err != nil {
		return err
	}
	queue := r.PathValue("queue")
	res, err := s.eng.DeleteConsumerGroup(r.Context(), group, queue, deleteMetadata)
	if err != nil {
		return err
	}
	s.log.Info("consumer group deleted", "request_id", requestID(r), "consumer_group", group, "queue", queue,
		"cursors_deleted", res.DeletedPartitions, "metadata_deleted", deleteMetadata)
	writeJSON(w, http.StatusOK, res)
	return nil
}

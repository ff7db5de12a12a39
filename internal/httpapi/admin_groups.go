package httpapi

import (
	"fmt"
	"net/http"
	"time"

	"github.com/lethe-mq/lethe/internal/engine"
)

func (s *Server) listConsumerGroups(w http.ResponseWriter, r *http.Request) {
	page, err := pageParams(r.URL.Query())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	groups, total, err := s.eng.ConsumerGroups(r.Context(), page)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeList(w, total, groups)
}

func (s *Server) laggingConsumerGroups(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	page, err := pageParams(q)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	// Queen's default: an hour.
	minLag, err := intParam(q.Get("minLagSeconds"), "minLagSeconds", 3600)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	rows, total, err := s.eng.LaggingPartitions(r.Context(), int64(minLag), page)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeList(w, total, rows)
}

func (s *Server) getConsumerGroup(w http.ResponseWriter, r *http.Request) {
	page, err := pageParams(r.URL.Query())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	byQueue, total, err := s.eng.ConsumerGroup(r.Context(), r.PathValue("group"), page)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeList(w, total, byQueue)
}

// deleteConsumerGroup serves DELETE /consumer-groups/{group} and
// DELETE /consumer-groups/{group}/queues/{queue}. deleteMetadata defaults
// to true, as in Queen.
func (s *Server) deleteConsumerGroup(w http.ResponseWriter, r *http.Request) {
	if !s.requireOperator(w, r) {
		return
	}
	deleteMetadata, err := boolParam(r.URL.Query().Get("deleteMetadata"), "deleteMetadata", true)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	group, queue := r.PathValue("group"), r.PathValue("queue")
	res, err := s.eng.DeleteConsumerGroup(r.Context(), group, queue, deleteMetadata)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.log.Info("consumer group deleted", "consumer_group", group, "queue", queue,
		"cursors_deleted", res.DeletedPartitions, "metadata_deleted", deleteMetadata)
	writeJSON(w, http.StatusOK, res)
}

type subscriptionRequest struct {
	SubscriptionTimestamp *string `json:"subscriptionTimestamp"`
}

func (s *Server) updateSubscription(w http.ResponseWriter, r *http.Request) {
	var req subscriptionRequest
	if err := s.decode(w, r, &req); err != nil {
		s.fail(w, r, err)
		return
	}
	if req.SubscriptionTimestamp == nil {
		s.fail(w, r, fmt.Errorf(`%w: body must be {"subscriptionTimestamp": "<RFC 3339 time>"}`, engine.ErrInvalid))
		return
	}
	at, err := bodyTime(*req.SubscriptionTimestamp, "subscriptionTimestamp")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	res, err := s.eng.UpdateSubscription(r.Context(), r.PathValue("group"), at)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

type seekRequest struct {
	ToEnd     bool    `json:"toEnd"`
	Timestamp *string `json:"timestamp"`
}

// seek serves the queue-wide seek, which needs exactly one of toEnd and
// timestamp, and the one-partition seek, where an empty body means toEnd
// (Queen's partition seek only goes to the end).
func (s *Server) seek(w http.ResponseWriter, r *http.Request) {
	var body seekRequest
	partition := r.PathValue("partition")
	if r.ContentLength != 0 || partition == "" {
		if err := s.decode(w, r, &body); err != nil {
			s.fail(w, r, err)
			return
		}
	}
	req := engine.SeekRequest{Group: r.PathValue("group"), Queue: r.PathValue("queue"), Partition: partition, ToEnd: body.ToEnd}
	if body.Timestamp != nil {
		at, err := bodyTime(*body.Timestamp, "timestamp")
		if err != nil {
			s.fail(w, r, err)
			return
		}
		req.Timestamp = &at
	}
	if partition != "" && req.Timestamp == nil {
		req.ToEnd = true
	}
	res, err := s.eng.Seek(r.Context(), req)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.log.Info("consumer group seeked", "consumer_group", req.Group, "queue", req.Queue, "partition", partition,
		"to_end", req.ToEnd, "timestamp", optionalTime(req.Timestamp), "partitions_updated", res.PartitionsUpdated)
	writeJSON(w, http.StatusOK, res)
}

func optionalTime(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

package httpapi

import (
	"net/http"
	"time"

	"github.com/lethe-mq/lethe/internal/apierr"
	"github.com/lethe-mq/lethe/internal/engine"
)

type subscriptionRequest struct {
	SubscriptionTimestamp *string `json:"subscriptionTimestamp"`
}

func (s *Server) updateSubscription(w http.ResponseWriter, r *http.Request) error {
	group, err := pathName(r, "group")
	if err != nil {
		return err
	}
	var req subscriptionRequest
	if err := s.decode(w, r, &req); err != nil {
		return err
	}
	if req.SubscriptionTimestamp == nil {
		return apierr.Field(apierr.Invalid, "subscriptionTimestamp", `body must be {"subscriptionTimestamp": "<RFC 3339 time>"}`)
	}
	at, err := bodyTime(*req.SubscriptionTimestamp, "subscriptionTimestamp")
	if err != nil {
		return err
	}
	res, err := s.eng.UpdateSubscription(r.Context(), group, at)
	if err != nil {
		return err
	}
	s.log.Info("consumer group subscription changed", "request_id", requestID(r), "consumer_group", group,
		"subscription_timestamp", at.UTC().Format(time.RFC3339Nano))
	writeJSON(w, http.StatusOK, res)
	return nil
}

type seekRequest struct {
	ToEnd     bool    `json:"toEnd"`
	Timestamp *string `json:"timestamp"`
}

// seek serves the queue-wide seek, which needs exactly one of toEnd and
// timestamp, and the one-partition seek, where an empty body means toEnd
// (Queen's partition seek only goes to the end).
func (s *Server) seek(w http.ResponseWriter, r *http.Request) error {
	req, err := s.seekRequest(w, r)
	if err != nil {
		return err
	}
	res, err := s.eng.Seek(r.Context(), req)
	if err != nil {
		return err
	}
	s.log.Info("consumer group seeked", "request_id", requestID(r), "consumer_group", req.Group, "queue", req.Queue,
		"partition", req.Partition, "to_end", req.ToEnd, "timestamp", optionalTime(req.Timestamp),
		"partitions_updated", res.PartitionsUpdated)
	writeJSON(w, http.StatusOK, res)
	return nil
}

func (s *Server) seekRequest(w http.ResponseWriter, r *http.Request) (engine.SeekRequest, error) {
	if err := checkPathNames(r, "group", "queue", "partition"); err != nil {
		return engine.SeekRequest{}, err
	}
	var body seekRequest
	partition := r.PathValue("partition")
	if r.ContentLength != 0 || partition == "" {
		if err := s.decode(w, r, &body); err != nil {
			return engine.SeekRequest{}, err
		}
	}
	req := engine.SeekRequest{Group: r.PathValue("group"), Queue: r.PathValue("queue"), Partition: partition, ToEnd: body.ToEnd}
	if body.Timestamp != nil {
		at, err := bodyTime(*body.Timestamp, "timestamp")
		if err != nil {
			return req, err
		}
		req.Timestamp = &at
	}
	if partition != "" && req.Timestamp == nil {
		req.ToEnd = true
	}
	return req, nil
}

func optionalTime(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

package httpapi

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/lethe-mq/lethe/api"
	"github.com/lethe-mq/lethe/internal/engine"
	"github.com/lethe-mq/lethe/internal/pushdec"
)

func (s *Server) push(w http.ResponseWriter, r *http.Request) {
	body, err := s.readBody(w, r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	// pushdec validates every payload in one pass (encoding/json scans each
	// three times); payloads alias body, which lives until we answer.
	req, err := pushdec.Decode(body)
	if err != nil {
		s.fail(w, r, fmt.Errorf("%w: %s", engine.ErrInvalid, err.Error()))
		return
	}
	if req.Items == nil {
		s.fail(w, r, fmt.Errorf("%w: body must be {\"items\": [{\"queue\": ..., \"payload\": ...}]}", engine.ErrInvalid))
		return
	}
	results, err := s.pushItems(r, req.Items)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeRaw(w, http.StatusCreated, appendPushResults(make([]byte, 0, 160*len(results)), results))
}

// pushItems appends items, or buffers them while push maintenance is on.
func (s *Server) pushItems(r *http.Request, items []api.PushItem) ([]api.PushResult, error) {
	if s.buffer != nil && s.buffer.Active(r.Context()) {
		return s.buffer.Buffer(r.Context(), items)
	}
	return s.eng.PushDecoded(r.Context(), items, "")
}

func (s *Server) pop(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	req := engine.PopRequest{
		Queue:            r.PathValue("queue"),
		Partition:        r.PathValue("partition"),
		Group:            q.Get("consumerGroup"),
		SubscriptionMode: q.Get("subscriptionMode"),
		SubscriptionFrom: q.Get("subscriptionFrom"),
		Namespace:        q.Get("namespace"),
		Task:             q.Get("task"),
		Timeout:          30 * time.Second,
	}
	if req.Queue == "" && req.Namespace == "" && req.Task == "" {
		s.fail(w, r, fmt.Errorf("%w: GET /api/v1/pop needs namespace or task (or use /api/v1/pop/queue/{queue})", engine.ErrInvalid))
		return
	}
	var err error
	if req.Batch, err = positiveParam(q.Get("batch"), "batch", 1); err != nil {
		s.fail(w, r, err)
		return
	}
	if req.Wait, err = boolParam(q.Get("wait"), "wait", false); err != nil {
		s.fail(w, r, err)
		return
	}
	if req.AutoAck, err = boolParam(q.Get("autoAck"), "autoAck", false); err != nil {
		s.fail(w, r, err)
		return
	}
	ms, err := intParam(q.Get("timeout"), "timeout", 30000)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	req.Timeout = time.Duration(ms) * time.Millisecond
	if req.MaxPartitions, err = positiveParam(q.Get("partitions"), "partitions", 1); err != nil {
		s.fail(w, r, err)
		return
	}
	if s.buffer != nil && s.buffer.PopPaused(r.Context()) {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	resp, err := s.eng.Pop(r.Context(), req)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if len(resp.Messages) == 0 {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	writeRaw(w, http.StatusOK, appendPopResponse(make([]byte, 0, 512*len(resp.Messages)), resp))
}

func intParam(v, name string, def int) (int, error) {
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("%w: query parameter %s must be a whole number, got %q", engine.ErrInvalid, name, v)
	}
	return n, nil
}

// positiveParam is intParam for counts, where 0 is a mistake, not "default".
func positiveParam(v, name string, def int) (int, error) {
	n, err := intParam(v, name, def)
	if err == nil && n < 1 {
		err = fmt.Errorf("%w: query parameter %s must be at least 1, got %d", engine.ErrInvalid, name, n)
	}
	return n, err
}

func boolParam(v, name string, def bool) (bool, error) {
	if v == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%w: query parameter %s must be true or false, got %q", engine.ErrInvalid, name, v)
	}
	return b, nil
}

func (s *Server) ack(w http.ResponseWriter, r *http.Request) {
	var req api.AckRequest
	if err := s.decode(w, r, &req); err != nil {
		s.fail(w, r, err)
		return
	}
	if req.PartitionID == "" || req.TransactionID == "" {
		s.fail(w, r, fmt.Errorf("%w: transactionId and partitionId are required (both come with the popped message)", engine.ErrInvalid))
		return
	}
	res, err := s.eng.Ack(r.Context(), []api.AckRequest{req}, "")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res[0])
}

func (s *Server) ackBatch(w http.ResponseWriter, r *http.Request) {
	var req api.AckBatchRequest
	if err := s.decode(w, r, &req); err != nil {
		s.fail(w, r, err)
		return
	}
	if len(req.Acknowledgments) == 0 {
		s.fail(w, r, fmt.Errorf("%w: acknowledgments must hold at least one ack", engine.ErrInvalid))
		return
	}
	if len(req.Acknowledgments) > engine.MaxBatch {
		s.fail(w, r, fmt.Errorf("%w: at most %d acknowledgments per request", engine.ErrInvalid, engine.MaxBatch))
		return
	}
	res, err := s.eng.Ack(r.Context(), req.Acknowledgments, req.ConsumerGroup)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

func (s *Server) transaction(w http.ResponseWriter, r *http.Request) {
	var req api.TransactionRequest
	if err := s.decode(w, r, &req); err != nil {
		s.fail(w, r, err)
		return
	}
	resp, err := s.eng.Transaction(r.Context(), req, "")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

func (s *Server) extendLease(w http.ResponseWriter, r *http.Request) {
	var req api.ExtendLeaseRequest
	if r.ContentLength != 0 {
		if err := s.decode(w, r, &req); err != nil {
			s.fail(w, r, err)
			return
		}
	}
	until, err := s.eng.ExtendLease(r.Context(), r.PathValue("leaseId"), req.Seconds)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, api.ExtendLeaseResponse{Success: true, LeaseID: r.PathValue("leaseId"),
		NewExpiresAt: until.UTC().Format(time.RFC3339Nano)})
}

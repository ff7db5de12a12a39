package httpapi

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/apierr"
	"github.com/lethe-mq/lethe/internal/auth"
	"github.com/lethe-mq/lethe/internal/engine"
	"github.com/lethe-mq/lethe/internal/pushdec"
	"github.com/lethe-mq/lethe/internal/validate"
)

func (s *Server) push(w http.ResponseWriter, r *http.Request) error {
	body, err := s.readBody(w, r)
	if err != nil {
		return err
	}
	// pushdec validates every payload in one pass (encoding/json scans each
	// three times) and refuses what PostgreSQL cannot store; payloads alias
	// body, which lives until we answer.
	req, err := pushdec.Decode(body)
	if err != nil {
		return apierr.Field(apierr.Invalid, decodePath(err), "%s", err.Error())
	}
	if req.Items == nil {
		return apierr.Field(apierr.Invalid, "items", `body must be {"items": [{"queue": ..., "payload": ...}]}`)
	}
	// The engine (or the maintenance buffer) checks every item by the rules
	// of package validate before anything is written. No items is Queen's
	// 201 [] (clients push an empty tail batch at the end of a loop).
	var results []api.PushResult
	switch {
	case len(req.Items) == 0:
		results = []api.PushResult{}
	case s.maint != nil && s.maint.State().Push:
		results, err = s.maint.Buffer(r.Context(), req.Items)
	default:
		var sub string
		if sub, err = producerSub(r); err == nil {
			results, err = s.eng.PushDecoded(r.Context(), req.Items, sub)
		}
	}
	if err != nil {
		return err
	}
	writeRaw(w, http.StatusCreated, appendPushResults(make([]byte, 0, pushResultsLen(results)), results))
	return nil
}

// producerSub is the producer a push stamps on its messages: the subject of
// the caller's JWT, never a value from the body (as in Queen, so a client
// cannot pass for another); "" without one. It must pass the rules of an
// id like any name stored.
func producerSub(r *http.Request) (string, error) {
	id, _ := auth.FromContext(r.Context())
	return id.Subject, validate.ID("the token's sub claim", id.Subject)
}

// decodePath is the field a pushdec error names.
func decodePath(err error) string {
	var e *pushdec.Error
	if errors.As(err, &e) {
		return e.Path
	}
	return ""
}

func (s *Server) pop(w http.ResponseWriter, r *http.Request) error {
	req, err := popRequest(r)
	if err != nil {
		return err
	}
	if s.maint != nil && s.maint.State().Pop {
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	if req.Wait && req.Timeout > 0 {
		if err := s.polls.enter(); err != nil {
			return err
		}
		defer s.polls.leave()
		s.extendWriteDeadline(w, req.Timeout)
	}
	resp, err := s.eng.Pop(r.Context(), req)
	if err != nil {
		return err
	}
	// A gap is told even without messages: the group has moved past it.
	if len(resp.Messages) == 0 && len(resp.Gaps) == 0 {
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	writeRaw(w, http.StatusOK, appendPopResponse(make([]byte, 0, 512*len(resp.Messages)), resp))
	return nil
}

// popRequest reads a pop's path and query; the engine checks the bounds.
func popRequest(r *http.Request) (engine.PopRequest, error) {
	q, err := query(r)
	if err != nil {
		return engine.PopRequest{}, err
	}
	names, err := queryNames(q, "consumerGroup", "namespace", "task")
	if err != nil {
		return engine.PopRequest{}, err
	}
	req := engine.PopRequest{
		Queue:            r.PathValue("queue"),
		Partition:        r.PathValue("partition"),
		Group:            names["consumerGroup"],
		Namespace:        names["namespace"],
		Task:             names["task"],
		SubscriptionMode: q.Get("subscriptionMode"),
		SubscriptionFrom: q.Get("subscriptionFrom"),
	}
	if err := checkPathNames(r, "queue", "partition"); err != nil {
		return req, err
	}
	if req.Queue == "" && req.Namespace == "" && req.Task == "" {
		return req, apierr.New(apierr.Invalid, "GET /api/v1/pop needs namespace or task (or use /api/v1/pop/queue/{queue})")
	}
	return req, popParams(q, &req)
}

// popParams reads the numbers and switches of a pop.
func popParams(q url.Values, req *engine.PopRequest) error {
	get := q.Get
	var err error
	if req.Batch, err = positiveParam(get("batch"), "batch", 1); err != nil {
		return err
	}
	if req.Wait, err = boolParam(get("wait"), "wait", false); err != nil {
		return err
	}
	if req.AutoAck, err = boolParam(get("autoAck"), "autoAck", false); err != nil {
		return err
	}
	ms, err := intParam(get("timeout"), "timeout", 30000)
	if err != nil {
		return err
	}
	if ms < 0 || ms > int(engine.MaxPopTimeout.Milliseconds()) {
		return apierr.Field(apierr.Invalid, "timeout", "query parameter timeout must be between 0 and %d (ms), got %d",
			engine.MaxPopTimeout.Milliseconds(), ms)
	}
	req.Timeout = time.Duration(ms) * time.Millisecond
	req.MaxPartitions, err = positiveParam(get("partitions"), "partitions", 1)
	return err
}

// checkPathNames checks the path's names that r's route has.
func checkPathNames(r *http.Request, keys ...string) error {
	for _, k := range keys {
		if v := r.PathValue(k); v != "" {
			if _, err := pathName(r, k); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *Server) ack(w http.ResponseWriter, r *http.Request) error {
	var req api.AckRequest
	if err := s.decode(w, r, &req); err != nil {
		return err
	}
	if req.PartitionID == "" || req.TransactionID == "" {
		return apierr.New(apierr.Invalid, "transactionId and partitionId are required (both come with the popped message)")
	}
	if err := checkAck("", req.TransactionID, req.PartitionID, req.LeaseID, req.ConsumerGroup); err != nil {
		return err
	}
	res, err := s.eng.Ack(r.Context(), []api.AckRequest{req}, "")
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res[0])
	return nil
}

func (s *Server) ackBatch(w http.ResponseWriter, r *http.Request) error {
	body, err := s.readBody(w, r)
	if err != nil {
		return err
	}
	// pushdec decodes the batch in one pass, many times faster than
	// encoding/json, and refuses what PostgreSQL cannot store as
	// validate.Storable does.
	req, err := pushdec.DecodeAckBatch(body)
	if err != nil {
		return apierr.Field(apierr.Invalid, decodePath(err), "%s", err.Error())
	}
	if len(req.Acknowledgments) == 0 {
		return apierr.Field(apierr.Invalid, "acknowledgments", "acknowledgments must hold at least one ack")
	}
	if err := validate.List("acknowledgments", len(req.Acknowledgments), validate.AckBatchMax); err != nil {
		return err
	}
	if err := validateName("consumerGroup", req.ConsumerGroup); err != nil {
		return err
	}
	for i, a := range req.Acknowledgments {
		if err := checkAck(indexed("acknowledgments", i), a.TransactionID, a.PartitionID, a.LeaseID, a.ConsumerGroup); err != nil {
			return err
		}
	}
	res, err := s.eng.Ack(r.Context(), req.Acknowledgments, req.ConsumerGroup)
	if err != nil {
		return err
	}
	writeRaw(w, http.StatusOK, appendAckResults(make([]byte, 0, 160*len(res)), res))
	return nil
}

func (s *Server) transaction(w http.ResponseWriter, r *http.Request) error {
	var req api.TransactionRequest
	if err := s.decode(w, r, &req); err != nil {
		return err
	}
	if err := validate.List("operations", len(req.Operations), validate.TransactionOperationsMax); err != nil {
		return err
	}
	if err := validate.List("requiredLeases", len(req.RequiredLeases), validate.TransactionLeasesMax); err != nil {
		return err
	}
	for i, op := range req.Operations {
		if op.Type != "ack" {
			continue // the engine checks pushes by the rules of package validate
		}
		if err := checkAck(indexed("operations", i), op.TransactionID, op.PartitionID, op.LeaseID, op.ConsumerGroup); err != nil {
			return err
		}
	}
	for i, id := range req.RequiredLeases {
		if err := validateID(indexed("requiredLeases", i), id); err != nil {
			return err
		}
	}
	if slices.ContainsFunc(req.Operations, func(op api.Operation) bool { return op.Type == "push" && len(op.Items) > 0 }) {
		if err := s.refuseWhilePushesBuffer("a transaction that pushes"); err != nil {
			return err
		}
	}
	sub, err := producerSub(r)
	if err != nil {
		return err
	}
	resp, err := s.eng.Transaction(r.Context(), req, sub)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}

func (s *Server) extendLease(w http.ResponseWriter, r *http.Request) error {
	var req api.ExtendLeaseRequest
	if r.ContentLength != 0 {
		if err := s.decode(w, r, &req); err != nil {
			return err
		}
	}
	leaseID, err := pathID(r, "leaseId")
	if err != nil {
		return err
	}
	until, err := s.eng.ExtendLease(r.Context(), leaseID, req.Seconds)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, api.ExtendLeaseResponse{Success: true, LeaseID: leaseID,
		NewExpiresAt: until.UTC().Format(time.RFC3339Nano)})
	return nil
}

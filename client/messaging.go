package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/lethe-mq/lethe/client/api"
)

// Push appends items and answers one result per item, in order. Items
// without a TransactionID get a fresh one first, so retries cannot write a
// message twice; the caller's slice is not changed.
func (c *Client) Push(ctx context.Context, items ...api.PushItem) ([]api.PushResult, error) {
	if len(items) == 0 {
		return nil, errors.New("push: no items given")
	}
	req := api.PushRequest{Items: make([]api.PushItem, len(items))}
	for i, it := range items {
		if it.TransactionID == "" {
			it.TransactionID = uuid.NewString()
		}
		req.Items[i] = it
	}
	var results []api.PushResult
	if err := c.Do(ctx, http.MethodPost, "/api/v1/push", req, &results); err != nil {
		return nil, err
	}
	return results, nil
}

// PopOptions narrow and shape a pop. Zero values take the server's defaults.
type PopOptions struct {
	Partition string // one partition; empty: any with work
	Group     string // consumer group; empty: queue mode
	Batch     int    // most messages to lease (server default 1)
	// Wait long-polls until messages arrive or Timeout passes.
	Wait    bool
	Timeout time.Duration // server default 30s
	// AutoAck marks messages done as they are delivered: no lease, no ack.
	AutoAck          bool
	SubscriptionMode string // "all" or "new", for a group's first pop
	SubscriptionFrom string // "now" or an RFC 3339 time
	Partitions       int    // most partitions one pop may lease
}

func (o PopOptions) query() string {
	q := url.Values{}
	if o.Group != "" {
		q.Set("consumerGroup", o.Group)
	}
	if o.Batch > 0 {
		q.Set("batch", strconv.Itoa(o.Batch))
	}
	if o.Wait {
		q.Set("wait", "true")
	}
	if o.Timeout > 0 {
		q.Set("timeout", strconv.FormatInt(o.Timeout.Milliseconds(), 10))
	}
	if o.AutoAck {
		q.Set("autoAck", "true")
	}
	if o.SubscriptionMode != "" {
		q.Set("subscriptionMode", o.SubscriptionMode)
	}
	if o.SubscriptionFrom != "" {
		q.Set("subscriptionFrom", o.SubscriptionFrom)
	}
	if o.Partitions > 0 {
		q.Set("partitions", strconv.Itoa(o.Partitions))
	}
	if len(q) == 0 {
		return ""
	}
	return "?" + q.Encode()
}

// Pop leases messages of queue. Nothing available is an empty slice and a
// nil error. Each message carries the PartitionID, TransactionID and LeaseID
// that Ack needs.
func (c *Client) Pop(ctx context.Context, queue string, opts PopOptions) ([]api.Message, error) {
	resp, err := c.PopResponse(ctx, queue, opts)
	if err != nil {
		return nil, err
	}
	return resp.Messages, nil
}

// PopResponse is Pop with the whole answer: besides the messages, the gaps
// (messages retention deleted before the group consumed them), which the
// server tells once. Nothing available is an answer with no messages.
func (c *Client) PopResponse(ctx context.Context, queue string, opts PopOptions) (*api.PopResponse, error) {
	if queue == "" {
		return nil, errors.New("pop: queue is required")
	}
	path := "/api/v1/pop/queue/" + url.PathEscape(queue)
	if opts.Partition != "" {
		path += "/partition/" + url.PathEscape(opts.Partition)
	}
	var resp api.PopResponse
	status, err := c.call(ctx, http.MethodGet, path+opts.query(), nil, &resp)
	if err != nil {
		return nil, err
	}
	if status == http.StatusNoContent || resp.Messages == nil {
		resp.Messages = []api.Message{}
	}
	return &resp, nil
}

// AckRequestFor builds the acknowledgement of msg. An empty status means
// completed.
func AckRequestFor(msg api.Message, status, errMsg string) api.AckRequest {
	if status == "" {
		status = api.AckCompleted
	}
	return api.AckRequest{
		TransactionID: msg.TransactionID,
		PartitionID:   msg.PartitionID,
		LeaseID:       msg.LeaseID,
		Status:        status,
		ConsumerGroup: msg.ConsumerGroup,
		Error:         errMsg,
	}
}

// Ack settles one popped message: status is completed (empty means the
// same), failed (redelivered until the queue's retryLimit) or dlq; errMsg
// says why it failed. An answer that did not apply the ack returns the
// result and an error wrapping ErrAckRejected.
func (c *Client) Ack(ctx context.Context, msg api.Message, status, errMsg string) (api.AckResult, error) {
	return c.AckRequest(ctx, AckRequestFor(msg, status, errMsg))
}

// AckRequest sends a hand-built acknowledgement; see Ack.
func (c *Client) AckRequest(ctx context.Context, req api.AckRequest) (api.AckResult, error) {
	var res api.AckResult
	if err := c.Do(ctx, http.MethodPost, "/api/v1/ack", req, &res); err != nil {
		return res, err
	}
	if !res.Success {
		return res, fmt.Errorf("%w: %s", ErrAckRejected, res.Error)
	}
	return res, nil
}

// AckBatch settles many messages in one request; group applies to acks that
// name none. Each result says whether its ack applied: a rejected ack is
// not an error here, check Success.
func (c *Client) AckBatch(ctx context.Context, group string, acks []api.AckRequest) ([]api.AckResult, error) {
	var res []api.AckResult
	err := c.Do(ctx, http.MethodPost, "/api/v1/ack/batch",
		api.AckBatchRequest{ConsumerGroup: group, Acknowledgments: acks}, &res)
	return res, err
}

// ExtendLease keeps a lease for seconds more from now (0: the queue's
// leaseTime) and returns its new expiry. A server that does not say when
// returns the zero time.
func (c *Client) ExtendLease(ctx context.Context, leaseID string, seconds int) (time.Time, error) {
	if leaseID == "" {
		return time.Time{}, errors.New("extend lease: lease id is required")
	}
	var resp api.ExtendLeaseResponse
	path := "/api/v1/lease/" + url.PathEscape(leaseID) + "/extend"
	if err := c.Do(ctx, http.MethodPost, path, api.ExtendLeaseRequest{Seconds: seconds}, &resp); err != nil {
		return time.Time{}, err
	}
	if !resp.Success {
		return time.Time{}, fmt.Errorf("%w: lease %s: %s", ErrLeaseNotExtended, leaseID, resp.Error)
	}
	if resp.NewExpiresAt == "" {
		return time.Time{}, nil
	}
	until, err := time.Parse(time.RFC3339Nano, resp.NewExpiresAt)
	if err != nil {
		return time.Time{}, fmt.Errorf("extend lease %s: newExpiresAt %q is not an RFC 3339 time", leaseID, resp.NewExpiresAt)
	}
	return until, nil
}

// Transaction applies acks and pushes all together or not at all. When the
// server rolled it back, the response (with its reason) comes with an error
// wrapping ErrTransactionAborted.
func (c *Client) Transaction(ctx context.Context, req api.TransactionRequest) (*api.TransactionResponse, error) {
	req = withTransactionIDs(req)
	var resp api.TransactionResponse
	if err := c.Do(ctx, http.MethodPost, "/api/v1/transaction", req, &resp); err != nil {
		return nil, err
	}
	if !resp.Success {
		return &resp, fmt.Errorf("%w: %s", ErrTransactionAborted, resp.Error)
	}
	return &resp, nil
}

// withTransactionIDs copies req, giving pushed items without a
// TransactionID one, so a retried transaction cannot push twice.
func withTransactionIDs(req api.TransactionRequest) api.TransactionRequest {
	ops := make([]api.Operation, len(req.Operations))
	for i, op := range req.Operations {
		if len(op.Items) > 0 {
			items := make([]api.PushItem, len(op.Items))
			for j, it := range op.Items {
				if it.TransactionID == "" {
					it.TransactionID = uuid.NewString()
				}
				items[j] = it
			}
			op.Items = items
		}
		ops[i] = op
	}
	req.Operations = ops
	return req
}

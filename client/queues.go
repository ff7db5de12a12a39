package client

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"github.com/lethe-mq/lethe/client/api"
)

// Queue is a queue as the server describes it.
type Queue = api.Queue

// Configure creates a queue or changes its options. Options the request
// does not name keep their values (the defaults for a new queue), so send
// only the keys you mean to set.
func (c *Client) Configure(ctx context.Context, req api.ConfigureRequest) (*api.ConfigureResponse, error) {
	if req.Queue == "" {
		return nil, errors.New("configure: queue is required")
	}
	var resp api.ConfigureResponse
	if err := c.Do(ctx, http.MethodPost, "/api/v1/configure", req, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

// GetQueue returns one queue; a missing queue is an *APIError with
// StatusCode 404 (see IsNotFound).
func (c *Client) GetQueue(ctx context.Context, name string) (*Queue, error) {
	if name == "" {
		return nil, errors.New("get queue: name is required")
	}
	var q Queue
	if err := c.Do(ctx, http.MethodGet, "/api/v1/resources/queues/"+url.PathEscape(name), nil, &q); err != nil {
		return nil, err
	}
	return &q, nil
}

// ListQueuesOptions filter ListQueues.
type ListQueuesOptions struct {
	Namespace string
	Task      string
}

// ListQueues returns every queue, optionally of one namespace or task.
func (c *Client) ListQueues(ctx context.Context, opts ListQueuesOptions) ([]Queue, error) {
	q := url.Values{}
	if opts.Namespace != "" {
		q.Set("namespace", opts.Namespace)
	}
	if opts.Task != "" {
		q.Set("task", opts.Task)
	}
	path := "/api/v1/resources/queues"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var resp struct {
		Queues []Queue `json:"queues"`
	}
	if err := c.Do(ctx, http.MethodGet, path, nil, &resp); err != nil {
		return nil, err
	}
	if resp.Queues == nil {
		resp.Queues = []Queue{}
	}
	return resp.Queues, nil
}

// DeleteQueue deletes a queue and all its messages. With authentication on
// it needs the operator token.
func (c *Client) DeleteQueue(ctx context.Context, name string) error {
	if name == "" {
		return errors.New("delete queue: name is required")
	}
	return c.Do(ctx, http.MethodDelete, "/api/v1/resources/queues/"+url.PathEscape(name), nil, nil)
}

// Health is the answer of GET /health.
type Health struct {
	Status        string `json:"status"`
	Database      string `json:"database"`
	Engine        string `json:"engine,omitempty"`
	Server        string `json:"server,omitempty"`
	Version       string `json:"version,omitempty"`
	UptimeSeconds int    `json:"uptimeSeconds,omitempty"`
}

// Health checks the server and its database. An unhealthy server answers
// 503, which is an *APIError.
func (c *Client) Health(ctx context.Context) (*Health, error) {
	var h Health
	if err := c.Do(ctx, http.MethodGet, "/health", nil, &h); err != nil {
		return nil, err
	}
	return &h, nil
}

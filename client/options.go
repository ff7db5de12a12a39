package client

import (
	"net/http"
	"time"
)

// Retry backoff defaults: the first retry waits about RetryBaseDefault,
// each next one twice as long, never more than RetryMaxDefault.
const (
	RetryBaseDefault = 100 * time.Millisecond
	RetryMaxDefault  = 2 * time.Second
)

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient sets the HTTP client. Its Timeout must exceed the longest
// long poll you ask for; by default there is none and contexts bound calls.
func WithHTTPClient(h *http.Client) Option {
	return func(c *Client) {
		if h != nil {
			c.http = h
		}
	}
}

// WithToken sends Authorization: Bearer token on every request.
func WithToken(token string) Option {
	return func(c *Client) { c.token = token }
}

// WithRetries retries a request up to n more times when the server answers
// 5xx or cannot be reached, waiting longer each time. 4xx answers are the
// request's fault and are never retried. Pushes stay safe to retry: items
// without a transactionId get one before the first attempt, so a retried
// push the server already applied answers "duplicate" instead of writing
// twice. The default is no retries.
func WithRetries(n int) Option {
	return func(c *Client) { c.retries = max(n, 0) }
}

// WithRetryBackoff sets the first retry's wait and the longest wait.
func WithRetryBackoff(base, maxWait time.Duration) Option {
	return func(c *Client) {
		if base > 0 {
			c.retryBase = base
		}
		if maxWait > 0 {
			c.retryMax = maxWait
		}
	}
}

// RequestEvent describes one HTTP attempt, for WithRequestHook.
type RequestEvent struct {
	Method     string
	Path       string
	Attempt    int // 0 for the first try
	StatusCode int // 0 when no answer came
	Err        error
	Duration   time.Duration
	WillRetry  bool
}

// WithRequestHook calls hook after every HTTP attempt, retries included.
// Use it to log or count; the client itself never logs.
func WithRequestHook(hook func(RequestEvent)) Option {
	return func(c *Client) { c.hook = hook }
}

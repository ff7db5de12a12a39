package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/lethe-mq/lethe/client/api"
)

// maxErrorBody bounds how much of an error answer is read.
const maxErrorBody = 64 << 10

// Client calls one server. It is safe for concurrent use.
type Client struct {
	base      string // scheme://host[:port][/prefix], no trailing slash
	http      *http.Client
	token     string
	retries   int
	retryBase time.Duration
	retryMax  time.Duration
	hook      func(RequestEvent)
}

// New returns a client of the server at baseURL, e.g. http://localhost:6632.
func New(baseURL string, opts ...Option) (*Client, error) {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("server URL %q: want http://host:port or https://host:port", baseURL)
	}
	u.RawQuery, u.Fragment = "", ""
	c := &Client{
		base:      strings.TrimRight(u.String(), "/"),
		http:      &http.Client{},
		retryBase: RetryBaseDefault,
		retryMax:  RetryMaxDefault,
	}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// BaseURL returns the server URL the client calls.
func (c *Client) BaseURL() string { return c.base }

// Do calls any endpoint: it sends in as JSON (none when nil), decodes a 2xx
// answer into out (skipped when out is nil or the answer is 204) and turns
// any other answer into an *APIError. path starts with a slash and may carry
// a query string. Use it for endpoints without a typed method: status,
// analytics, consumer groups, dead letters.
func (c *Client) Do(ctx context.Context, method, path string, in, out any) error {
	_, err := c.call(ctx, method, path, in, out)
	return err
}

// call is Do that also reports the status code, so Pop can tell 204.
func (c *Client) call(ctx context.Context, method, path string, in, out any) (int, error) {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return 0, fmt.Errorf("%s %s: encode request: %w", method, path, err)
		}
	}
	for attempt := 0; ; attempt++ {
		began := time.Now()
		status, err := c.once(ctx, method, path, body, out)
		retry := err != nil && attempt < c.retries && ctx.Err() == nil && retryable(err)
		if c.hook != nil {
			c.hook(RequestEvent{Method: method, Path: path, Attempt: attempt, StatusCode: status, Err: err,
				Duration: time.Since(began), WillRetry: retry})
		}
		if !retry {
			return status, err
		}
		t := time.NewTimer(c.backoff(attempt, c.retryMax))
		select {
		case <-ctx.Done():
			t.Stop()
			return status, err
		case <-t.C:
		}
	}
}

// transportError is a request that got no answer: the server may be down or
// the connection broke.
type transportError struct{ err error }

func (e *transportError) Error() string { return e.err.Error() }
func (e *transportError) Unwrap() error { return e.err }

func retryable(err error) bool {
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		return apiErr.Temporary()
	}
	var te *transportError
	return errors.As(err, &te)
}

// backoff waits between half and all of base*2^attempt, capped at ceiling;
// the jitter keeps many clients from retrying in step.
func (c *Client) backoff(attempt int, ceiling time.Duration) time.Duration {
	d := ceiling
	if attempt < 20 {
		d = min(c.retryBase<<attempt, ceiling)
	}
	return d/2 + rand.N(d/2+1)
}

func (c *Client) once(ctx context.Context, method, path string, body []byte, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return 0, fmt.Errorf("%s %s: %w", method, path, err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "lethe-go-client")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return 0, fmt.Errorf("%s %s: %w", method, path, ctx.Err())
		}
		return 0, fmt.Errorf("%s %s: %w", method, path, &transportError{err})
	}
	defer func() {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
		resp.Body.Close()
	}()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, fmt.Errorf("%s %s: %w", method, path, decodeError(resp))
	}
	if out == nil || resp.StatusCode == http.StatusNoContent {
		return resp.StatusCode, nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return resp.StatusCode, fmt.Errorf("%s %s: decode %d answer: %w", method, path, resp.StatusCode, err)
	}
	return resp.StatusCode, nil
}

// decodeError reads {"error": "..."}; other bodies are kept as text.
func decodeError(resp *http.Response) *APIError {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	e := &APIError{StatusCode: resp.StatusCode}
	var body api.Error
	if json.Unmarshal(raw, &body) == nil && body.Error != "" {
		e.Message = body.Error
	} else {
		e.Message = strings.TrimSpace(string(raw))
	}
	return e
}

package clienttest_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/client"
	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/testserver"
)

// flaky is a real HTTP server that fails its first failures requests the
// given way, then answers healthy.
func flaky(t *testing.T, failures int, fail func(w http.ResponseWriter)) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if int(calls.Add(1)) <= failures {
			fail(w)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":"healthy","database":"connected"}`)
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

func status(code int) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.WriteHeader(code)
		_, _ = io.WriteString(w, `{"error":"try later"}`)
	}
}

// hangUp closes the connection without answering: a network error.
func hangUp(w http.ResponseWriter) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		conn.Close()
	}
}

func fastRetries(n int) []client.Option {
	return []client.Option{client.WithRetries(n), client.WithRetryBackoff(time.Millisecond, 5*time.Millisecond)}
}

func TestRetriesServerErrorsThenSucceeds(t *testing.T) {
	t.Parallel()
	srv, calls := flaky(t, 2, status(http.StatusInternalServerError))
	var events []client.RequestEvent
	var mu sync.Mutex
	opts := append(fastRetries(3), client.WithRequestHook(func(e client.RequestEvent) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	}))
	c, err := client.New(srv.URL, opts...)
	if err != nil {
		t.Fatal(err)
	}
	h, err := c.Health(context.Background())
	if err != nil {
		t.Fatalf("Health after 2 failures with 3 retries: %v", err)
	}
	if h.Status != "healthy" || calls.Load() != 3 {
		t.Fatalf("status %q after %d calls, want healthy after 3", h.Status, calls.Load())
	}
	if len(events) != 3 || !events[0].WillRetry || !events[1].WillRetry || events[2].WillRetry ||
		events[0].StatusCode != 500 || events[2].StatusCode != 200 || events[2].Attempt != 2 {
		t.Fatalf("hook saw %+v, want two retried 500s and a final 200 on attempt 2", events)
	}
}

func TestRetriesNetworkErrors(t *testing.T) {
	t.Parallel()
	srv, calls := flaky(t, 2, hangUp)
	c, _ := client.New(srv.URL, fastRetries(2)...)
	if _, err := c.Health(context.Background()); err != nil {
		t.Fatalf("Health after 2 hang-ups with 2 retries: %v", err)
	}
	if calls.Load() != 3 {
		t.Fatalf("%d calls, want 3", calls.Load())
	}
}

func TestRetriesGiveUpWithLastError(t *testing.T) {
	t.Parallel()
	srv, calls := flaky(t, 100, status(http.StatusServiceUnavailable))
	c, _ := client.New(srv.URL, fastRetries(2)...)
	_, err := c.Health(context.Background())
	var apiErr *client.APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 503 || apiErr.Message != "try later" {
		t.Fatalf("err = %v, want APIError 503 \"try later\"", err)
	}
	if calls.Load() != 3 {
		t.Fatalf("%d calls, want 1 + 2 retries", calls.Load())
	}
}

func TestNeverRetries4xx(t *testing.T) {
	t.Parallel()
	for _, code := range []int{400, 401, 404, 409, 413, 429} {
		srv, calls := flaky(t, 100, status(code))
		c, _ := client.New(srv.URL, fastRetries(5)...)
		_, err := c.Health(context.Background())
		var apiErr *client.APIError
		if !errors.As(err, &apiErr) || apiErr.StatusCode != code {
			t.Fatalf("%d: err = %v, want APIError %d", code, err, code)
		}
		if calls.Load() != 1 {
			t.Fatalf("%d was sent %d times, want once (4xx is never retried)", code, calls.Load())
		}
	}
}

func TestNoRetriesByDefault(t *testing.T) {
	t.Parallel()
	srv, calls := flaky(t, 1, status(http.StatusInternalServerError))
	c, _ := client.New(srv.URL)
	if _, err := c.Health(context.Background()); err == nil {
		t.Fatal("Health succeeded; the only attempt should have failed with 500")
	}
	if calls.Load() != 1 {
		t.Fatalf("%d calls, want 1", calls.Load())
	}
}

func TestRetryWaitEndsWithContext(t *testing.T) {
	t.Parallel()
	srv, _ := flaky(t, 100, status(http.StatusInternalServerError))
	c, _ := client.New(srv.URL, client.WithRetries(10), client.WithRetryBackoff(time.Hour, time.Hour))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	began := time.Now()
	_, err := c.Health(ctx)
	if err == nil || time.Since(began) > 5*time.Second {
		t.Fatalf("err = %v after %v, want the 500 soon after the context ended", err, time.Since(began))
	}
}

// A push whose answer is lost is retried; the server must see the retry as
// the same message, not a second one.
func TestRetriedPushIsNotDuplicated(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	upstream, _ := url.Parse(srv.URL)
	proxy := httputil.NewSingleHostReverseProxy(upstream)
	var pushes atomic.Int32
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/v1/push" && pushes.Add(1) == 1 {
			// Apply the push, then lose the answer.
			proxy.ServeHTTP(httptest.NewRecorder(), r)
			hangUp(w)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)

	c, _ := client.New(front.URL, fastRetries(2)...)
	ctx := context.Background()
	res, err := c.Push(ctx, api.PushItem{Queue: "retried", Payload: json.RawMessage(`1`)})
	if err != nil {
		t.Fatalf("push: %v", err)
	}
	if pushes.Load() != 2 || res[0].Status != api.StatusDuplicate {
		t.Fatalf("%d push requests, status %q; want the retry answered duplicate", pushes.Load(), res[0].Status)
	}
	msgs, err := c.Pop(ctx, "retried", client.PopOptions{Batch: 10})
	if err != nil || len(msgs) != 1 {
		t.Fatalf("pop: %d messages, %v; want exactly 1", len(msgs), err)
	}
}

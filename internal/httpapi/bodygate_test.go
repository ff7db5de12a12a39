package httpapi_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/internal/config"
)

// pushBody is a push of one message whose body is exactly n bytes.
func pushBody(queue string, n int) string {
	head, tail := `{"items":[{"queue":"`+queue+`","payload":"`, `"}]}`
	return head + strings.Repeat("x", n-len(head)-len(tail)) + tail
}

// The request bodies a replica holds at once are bounded in bytes
// (LETHE_MAX_BODY_BYTES_IN_FLIGHT): while one request holds the whole
// bound, another waits for room and answers 503 with Retry-After; once
// the first is answered, requests go through again, and one larger than
// the bound is served alone. Fails when a request is admitted past the
// bound, or when a request larger than it can never be served.
func TestBodiesInFlightAreBounded(t *testing.T) {
	t.Parallel()
	const bound = 1 << 20
	r := startCoreReplica(t, func(c *config.Server) { c.MaxBodies = bound; c.BodyWait = 200 * time.Millisecond })

	// A push that declares the whole bound and sends its body slowly.
	body := pushBody("gate", bound)
	pr, pw := io.Pipe()
	req, err := http.NewRequest(http.MethodPost, r.url+"/api/v1/push", pr)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = bound
	req.Header.Set("Content-Type", "application/json")
	first := make(chan int, 1)
	go func() {
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			first <- 0
			return
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		first <- res.StatusCode
	}()
	if _, err := io.WriteString(pw, body[:100]); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the slow push holding the bound", func() bool { return r.srv.Server.BodyBytesInFlight() == bound })

	second := r.do(http.MethodPost, "/api/v1/push", pushBody("gate", 200))
	requireCoreError(t, "a push while the bound is held", second, http.StatusServiceUnavailable)
	if got := second.header.Get("Retry-After"); got != "1" {
		t.Errorf("Retry-After %q, want 1", got)
	}

	if _, err := io.WriteString(pw, body[100:]); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	if status := <-first; status != http.StatusCreated {
		t.Fatalf("the slow push answered %d, want 201", status)
	}
	waitFor(t, "no body in flight", func() bool { return r.srv.Server.BodyBytesInFlight() == 0 })
	if res := r.do(http.MethodPost, "/api/v1/push", pushBody("gate", 200)); res.status != http.StatusCreated {
		t.Errorf("a push after the slow one: %d %s, want 201", res.status, res.body)
	}
	if res := r.do(http.MethodPost, "/api/v1/push", pushBody("gate", 2*bound)); res.status != http.StatusCreated {
		t.Errorf("a push larger than the bound, alone: %d %s, want 201", res.status, res.body)
	}
}

package httpapi_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/internal/config"
	"github.com/lethe-mq/lethe/internal/httpapi"
)

// pushBody is a push of one message whose body is exactly n bytes.
func pushBody(queue string, n int) string {
	head, tail := `{"items":[{"queue":"`+queue+`","payload":"`, `"}]}`
	return head + strings.Repeat("x", n-len(head)-len(tail)) + tail
}

// slowPush starts a push to url that declares length bytes (-1: chunked)
// and sends what the caller writes to the pipe; the answer's status comes
// on the channel (0: the connection failed).
func slowPush(t *testing.T, url, token string, length int64) (*io.PipeWriter, <-chan int) {
	t.Helper()
	pr, pw := io.Pipe()
	req, err := http.NewRequest(http.MethodPost, url+"/api/v1/push", pr)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = length
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	status := make(chan int, 1)
	go func() {
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			status <- 0
			return
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		status <- res.StatusCode
	}()
	t.Cleanup(func() { pw.CloseWithError(io.ErrClosedPipe) })
	return pw, status
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

	// A push that declares twice the bound and has sent enough of it for
	// its buffer to take the whole bound.
	body := pushBody("gate", 2*bound)
	pw, first := slowPush(t, r.url, "", int64(len(body)))
	if _, err := io.WriteString(pw, body[:bound/2]); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the slow push holding the bound", func() bool { return r.srv.Server.BodyBytesInFlight() == bound })

	second := r.do(http.MethodPost, "/api/v1/push", pushBody("gate", 200))
	requireCoreError(t, "a push while the bound is held", second, http.StatusServiceUnavailable)
	if got := second.header.Get("Retry-After"); got != "1" {
		t.Errorf("Retry-After %q, want 1", got)
	}

	if _, err := io.WriteString(pw, body[bound/2:]); err != nil {
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

// A body is charged after its caller's credential is checked and as its
// bytes arrive: requests without a credential, and requests that have
// sent nothing yet, hold (next to) nothing, and a chunked push is charged
// by what it has sent, not the 64 MiB body limit. Fails when the charge
// is taken at the request's start.
func TestBodiesAreChargedAsTheyArrive(t *testing.T) {
	t.Parallel()
	const bound = 8 << 20
	r := startCoreReplica(t, func(c *config.Server) {
		c.MaxBodies = bound
		c.AuthToken, c.OperatorToken = "write-token", "operator-token"
	})
	// Without a credential: answered 401 at once (the connection closed
	// rather than drained), nothing held.
	for i := range 4 {
		pw, status := slowPush(t, r.url, "", -1)
		if _, err := io.WriteString(pw, `{"items":[`); err != nil {
			t.Fatal(err)
		}
		if got := <-status; got != http.StatusUnauthorized {
			t.Fatalf("unauthenticated chunked push %d answered %d, want 401", i, got)
		}
	}
	if n := r.srv.Server.BodyBytesInFlight(); n != 0 {
		t.Errorf("after unauthenticated pushes %d bytes held, want 0", n)
	}
	// With a credential, chunked: charged by what was sent.
	var pipes []*io.PipeWriter
	for range 10 {
		pw, _ := slowPush(t, r.url, "write-token", -1)
		if _, err := io.WriteString(pw, `{"items":[`); err != nil {
			t.Fatal(err)
		}
		pipes = append(pipes, pw)
	}
	waitFor(t, "ten chunked pushes admitted", func() bool { return r.srv.Server.BodyBytesInFlight() > 0 })
	time.Sleep(100 * time.Millisecond) // the ten have all started reading
	if n := r.srv.Server.BodyBytesInFlight(); n > 10*64<<10 {
		t.Errorf("ten chunked pushes that sent 10 bytes each hold %d bytes, want at most %d", n, 10*64<<10)
	}
	// One that keeps sending is charged what it sends, up to four times.
	big := pushBody("arrive", 2<<20)
	if _, err := io.WriteString(pipes[0], big[len(`{"items":[`):len(big)/2]); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the sender charged for what it sent", func() bool { return r.srv.Server.BodyBytesInFlight() >= 1<<20 })
	if n := r.srv.Server.BodyBytesInFlight(); n > 4*(1<<20)+10*64<<10 {
		t.Errorf("a push that sent 1 MiB holds %d bytes, want at most four times that", n)
	}
	for _, pw := range pipes {
		pw.CloseWithError(io.ErrUnexpectedEOF)
	}
	waitFor(t, "no body in flight", func() bool { return r.srv.Server.BodyBytesInFlight() == 0 })
}

// A connection that holds a charge and stops sending is cut after the
// idle bound, and what it held is returned. Fails when a stalled body is
// waited for until the whole body deadline.
func TestStalledBodyIsCut(t *testing.T) {
	t.Parallel()
	r := startCoreReplica(t, nil)
	front := httpapi.New(httpapi.Config{Engine: r.srv.Engine,
		Timeouts: httpapi.Timeouts{BodyIdle: 300 * time.Millisecond, BodyRead: time.Minute}})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := front.HTTPServer(nil)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })

	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	fmt.Fprintf(conn, "POST /api/v1/push HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"ite\r\n")
	waitFor(t, "the stalled push charged", func() bool { return front.BodyBytesInFlight() > 0 })
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("the stalled push got no answer: %v", err)
	}
	b, _ := io.ReadAll(res.Body)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("a stalled body was cut after %s, want about the 300 ms idle bound", took)
	}
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "timed out") {
		t.Errorf("the stalled push answered %d %s, want 400 saying it timed out", res.StatusCode, b)
	}
	waitFor(t, "the stalled push's charge returned", func() bool { return front.BodyBytesInFlight() == 0 })
}

// Requests of other roles holding all the bound they may take leave the
// operator's share: a maintenance switch still answers at once.
func TestOperatorKeepsAShareOfTheBodyBound(t *testing.T) {
	t.Parallel()
	const bound = 1 << 20
	r := startCoreReplica(t, func(c *config.Server) {
		c.MaxBodies = bound
		c.BodyWait = 200 * time.Millisecond
		c.AuthToken, c.OperatorToken = "write-token", "operator-token"
		c.DataDir = t.TempDir()
	})
	body := pushBody("share", 4*bound)
	pw, _ := slowPush(t, r.url, "write-token", int64(len(body)))
	if _, err := io.WriteString(pw, body[:bound]); err != nil {
		t.Fatal(err)
	}
	writerShare := int64(bound - bound/8)
	waitFor(t, "a writer holding all it may", func() bool { return r.srv.Server.BodyBytesInFlight() == writerShare })

	do := func(token, path, body string) coreResult {
		req, err := http.NewRequest(http.MethodPost, r.url+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return coreResult{status: res.StatusCode, header: res.Header, body: b}
	}
	if res := do("write-token", "/api/v1/push", pushBody("share", 200)); res.status != http.StatusServiceUnavailable {
		t.Errorf("another writer's push: %d %s, want 503 (the writers' share is held)", res.status, res.body)
	}
	for _, on := range []string{"true", "false"} {
		if res := do("operator-token", "/api/v1/system/maintenance", `{"enabled":`+on+`}`); res.status != http.StatusOK {
			t.Errorf("the operator's maintenance switch (%s) while writers hold their share: %d %s, want 200", on, res.status, res.body)
		}
	}
}

package httpapi_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/internal/httpapi"
)

// serveWithTimeouts serves a second front on r's engine with short
// timeouts, over a real listener.
func serveWithTimeouts(t *testing.T, r *coreReplica, to httpapi.Timeouts) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httpapi.New(httpapi.Config{Engine: r.srv.Engine, Timeouts: to}).HTTPServer(nil)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// A connection that sends its body too slowly is answered and closed after
// the body-read timeout; a long poll outlives the write timeout; an idle
// kept-alive connection is closed after the idle timeout.
func TestConnectionTimeouts(t *testing.T) {
	t.Parallel()
	r := startCoreReplica(t, nil)
	to := httpapi.Timeouts{BodyRead: 300 * time.Millisecond, Write: 500 * time.Millisecond, Idle: 300 * time.Millisecond}
	addr := serveWithTimeouts(t, r, to)

	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	_, err = io.WriteString(conn, "POST /api/v1/push HTTP/1.1\r\nHost: lethe\r\nContent-Type: application/json\r\n"+
		"Content-Length: 100\r\n\r\n{\"items\":")
	if err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	rest, err := io.ReadAll(conn) // the answer, then the server's close
	took := time.Since(start)
	if err != nil || took < to.BodyRead {
		t.Fatalf("slow body: read %q, %v after %s; want the connection closed after %s", rest, err, took, to.BodyRead)
	}

	pollStart := time.Now()
	res := coreDo(t, "GET", "http://"+addr+"/api/v1/pop/queue/slowpoll?wait=true&timeout=1200", "")
	if res.status != http.StatusNoContent || time.Since(pollStart) < 1200*time.Millisecond {
		t.Fatalf("long poll past the write timeout: %d %s after %s, want 204 after 1.2 s", res.status, res.body, time.Since(pollStart))
	}

	idle, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	if _, err := io.WriteString(idle, "GET /api/v1/resources/queues HTTP/1.1\r\nHost: lethe\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(idle)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	_ = idle.SetReadDeadline(time.Now().Add(10 * time.Second))
	idleStart := time.Now()
	if _, err := br.ReadByte(); err != io.EOF || time.Since(idleStart) > 5*time.Second {
		t.Fatalf("idle connection: read %v after %s, want EOF after about %s", err, time.Since(idleStart), to.Idle)
	}
}

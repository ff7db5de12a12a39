package httpapi

import (
	"cmp"
	"context"
	"io"
	"net"
	"net/http"
	"time"
)

// Timeouts bound what one connection may hold. A long poll extends its
// write deadline by its own timeout (longpoll.go).
type Timeouts struct {
	// ReadHeader bounds reading a request's headers.
	ReadHeader time.Duration
	// BodyRead bounds reading a request's body, from the handler's start.
	BodyRead time.Duration
	// BodyIdle bounds the wait for each next byte of a body: a
	// connection that stops sending is cut, and returns what it was
	// charged under the bound on bodies in flight.
	BodyIdle time.Duration
	// Write bounds the time from the end of the headers to the end of the
	// answer.
	Write time.Duration
	// Idle bounds how long a kept-alive connection waits for its next
	// request.
	Idle time.Duration
}

// Defaults of Timeouts.
const (
	ReadHeaderTimeoutDefault = 10 * time.Second
	BodyReadTimeoutDefault   = time.Minute
	BodyIdleTimeoutDefault   = 5 * time.Second
	WriteTimeoutDefault      = 2 * time.Minute
	IdleTimeoutDefault       = 2 * time.Minute
)

func (t Timeouts) withDefaults() Timeouts {
	return Timeouts{
		ReadHeader: cmp.Or(t.ReadHeader, ReadHeaderTimeoutDefault),
		BodyRead:   cmp.Or(t.BodyRead, BodyReadTimeoutDefault),
		BodyIdle:   cmp.Or(t.BodyIdle, BodyIdleTimeoutDefault),
		Write:      cmp.Or(t.Write, WriteTimeoutDefault),
		Idle:       cmp.Or(t.Idle, IdleTimeoutDefault),
	}
}

// HTTPServer is an http.Server for s with its timeouts; requests run under
// contexts from base.
func (s *Server) HTTPServer(base func(net.Listener) context.Context) *http.Server {
	return &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: s.timeouts.ReadHeader,
		WriteTimeout:      s.timeouts.Write,
		IdleTimeout:       s.timeouts.Idle,
		BaseContext:       base,
	}
}

// withBodyDeadline bounds the reading of a request's body: a connection
// that sends its body too slowly (past BodyRead in all), or stops sending
// it (BodyIdle without a byte), is closed. The deadline is lifted once the
// body is read, so it never cuts a slow handler or a long poll (http.Server's
// own ReadTimeout would: it also ends the request's context).
func (s *Server) withBodyDeadline(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody {
			rc := http.NewResponseController(w)
			end := time.Now().Add(s.timeouts.BodyRead)
			if rc.SetReadDeadline(end) == nil {
				r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc, end: end, idle: s.timeouts.BodyIdle}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// bodyUnread reports whether r has a body that has not been read to its
// end.
func bodyUnread(r *http.Request) bool {
	b, ok := r.Body.(*deadlineBody)
	return ok && !b.lifted
}

// deadlineBody moves the read deadline before each read (the sooner of
// the body's end and the idle bound), and lifts it when its body has been
// read.
type deadlineBody struct {
	io.ReadCloser
	rc     *http.ResponseController
	end    time.Time
	idle   time.Duration
	lifted bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	if !b.lifted {
		d := time.Now().Add(b.idle)
		if d.After(b.end) {
			d = b.end
		}
		_ = b.rc.SetReadDeadline(d)
	}
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.lifted {
		b.lifted = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

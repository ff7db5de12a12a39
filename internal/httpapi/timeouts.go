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
	WriteTimeoutDefault      = 2 * time.Minute
	IdleTimeoutDefault       = 2 * time.Minute
)

func (t Timeouts) withDefaults() Timeouts {
	return Timeouts{
		ReadHeader: cmp.Or(t.ReadHeader, ReadHeaderTimeoutDefault),
		BodyRead:   cmp.Or(t.BodyRead, BodyReadTimeoutDefault),
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
// that sends its body too slowly is closed. The deadline is lifted once the
// body is read, so it never cuts a slow handler or a long poll (http.Server's
// own ReadTimeout would: it also ends the request's context).
func (s *Server) withBodyDeadline(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody {
			rc := http.NewResponseController(w)
			if rc.SetReadDeadline(time.Now().Add(s.timeouts.BodyRead)) == nil {
				r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// deadlineBody lifts the read deadline when its body has been read.
type deadlineBody struct {
	io.ReadCloser
	rc     *http.ResponseController
	lifted bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.lifted {
		b.lifted = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

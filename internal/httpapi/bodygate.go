package httpapi

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/lethe-mq/lethe/internal/apierr"
)

// bodyGate bounds the request bodies one replica holds at once, in bytes
// (LETHE_MAX_BODY_BYTES_IN_FLIGHT). A body, and what is decoded from it,
// lives until its answer is written, and every request may send up to
// the 64 MiB body limit: without a bound, a few dozen concurrent large
// pushes took the replica's memory past a gigabyte. A request takes its
// declared length (the body limit when it declares none) before its body
// is read, waits its turn for at most wait, and answers 503 with
// Retry-After past that; one larger than the whole bound takes all of it.
type bodyGate struct {
	sem   *semaphore.Weighted
	max   int64
	wait  time.Duration
	inUse atomic.Int64
}

func newBodyGate(max int64, wait time.Duration) *bodyGate {
	return &bodyGate{sem: semaphore.NewWeighted(max), max: max, wait: wait}
}

// bodyGateRetryAfter is the Retry-After of a request the gate turned away.
const bodyGateRetryAfter = time.Second

// enter admits n bytes of body, or refuses after the wait; an admitted
// request calls the release it was given.
func (g *bodyGate) enter(ctx context.Context, n int64) (release func(), err error) {
	n = min(n, g.max)
	ctx, cancel := context.WithTimeout(ctx, g.wait)
	defer cancel()
	if err := g.sem.Acquire(ctx, n); err != nil {
		return nil, &apierr.Error{Kind: apierr.Unavailable, RetryAfter: bodyGateRetryAfter,
			Msg: "this replica already holds its limit of request bodies in flight (LETHE_MAX_BODY_BYTES_IN_FLIGHT); retry, or send smaller requests"}
	}
	g.inUse.Add(n)
	return func() {
		g.inUse.Add(-n)
		g.sem.Release(n)
	}, nil
}

// withBodyGate admits each request with a body through the gate before
// its body is read (and before the body's read deadline starts), and
// holds its share until the handler returns.
func (s *Server) withBodyGate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
			next.ServeHTTP(w, r)
			return
		}
		n := r.ContentLength
		if n < 0 || n > s.maxBody {
			n = s.maxBody // undeclared, or refused with 413 once read past the limit
		}
		release, err := s.bodies.enter(r.Context(), n)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		defer release()
		next.ServeHTTP(w, r)
	})
}

// BodyBytesInFlight is the body bytes the gate holds for requests being
// served.
func (s *Server) BodyBytesInFlight() int64 { return s.bodies.inUse.Load() }

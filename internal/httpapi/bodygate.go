package httpapi

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lethe-mq/lethe/internal/apierr"
	"github.com/lethe-mq/lethe/internal/auth"
)

// bodyGate bounds the request bodies one replica holds at once, in bytes
// (LETHE_MAX_BODY_BYTES_IN_FLIGHT): every request may send up to the
// 64 MiB body limit, and without a bound a few dozen concurrent large
// pushes took the replica's memory past a gigabyte.
//
// A request is charged for the buffer its body is read into, as that
// buffer grows with the bytes that arrive (readAll): never before its
// credential is checked, never for bytes it has not begun to send (at most
// four times what it has sent, and 64 KiB at first). A request that finds
// no room waits up to wait in all, then answers 503 with Retry-After; one
// larger than its whole share takes all of it and reads the rest. A
// connection that sends nothing for Timeouts.BodyIdle is cut
// (withBodyDeadline), which returns its charge.
//
// The last eighth of the bound is kept for operator requests, so that
// requests of other roles holding the rest cannot keep an operator from
// acting (a maintenance switch, a deletion).
type bodyGate struct {
	max     int64 // the bound
	reserve int64 // the operator's share of it
	wait    time.Duration

	mu   sync.Mutex
	used int64
	// waiting counts the requests waiting for room; freed is closed, and
	// replaced, when bytes are released while any waits (a release with
	// nobody waiting allocates nothing).
	waiting int
	freed   chan struct{}
	inUse   atomic.Int64
}

// operatorShareDivisor: the operator's share is 1/operatorShareDivisor of
// the bound.
const operatorShareDivisor = 8

func newBodyGate(limit int64, wait time.Duration) *bodyGate {
	return &bodyGate{max: limit, reserve: limit / operatorShareDivisor, wait: wait, freed: make(chan struct{})}
}

// bodyGateRetryAfter is the Retry-After of a request the gate turned away.
const bodyGateRetryAfter = time.Second

// bodyCharge is one request's account with the gate. Its methods are
// called from the request's own goroutine.
type bodyCharge struct {
	g        *bodyGate
	ctx      context.Context
	operator bool
	// giveUp is when waiting for room ends, counted from the first wait.
	giveUp time.Time
	held   int64
}

// open starts a request's account; operator requests may use the
// operator's share.
func (g *bodyGate) open(ctx context.Context, operator bool) *bodyCharge {
	return &bodyCharge{g: g, ctx: ctx, operator: operator}
}

// limit is what the gate may hold in all when a request of c's role
// takes more: the whole bound for an operator, the rest for others.
func (c *bodyCharge) limit() int64 {
	if c.operator {
		return c.g.max
	}
	return c.g.max - c.g.reserve
}

// take charges n more bytes, waiting for room up to the gate's wait in
// all; past it, an Unavailable error with Retry-After. A request already
// holding as much as its role may take in all takes nothing more.
func (c *bodyCharge) take(n int64) error {
	limit := c.limit()
	n = min(n, limit-c.held)
	if n <= 0 {
		return nil
	}
	g := c.g
	for {
		g.mu.Lock()
		if g.used+n <= limit {
			g.used += n
			g.mu.Unlock()
			c.held += n
			g.inUse.Add(n)
			return nil
		}
		freed := g.freed
		g.waiting++
		g.mu.Unlock()
		err := c.await(freed)
		g.mu.Lock()
		g.waiting--
		g.mu.Unlock()
		if err != nil {
			return err
		}
	}
}

// await waits for freed, until c's wait for room runs out or its request
// ends.
func (c *bodyCharge) await(freed <-chan struct{}) error {
	if c.giveUp.IsZero() {
		c.giveUp = time.Now().Add(c.g.wait)
	}
	timer := time.NewTimer(time.Until(c.giveUp))
	defer timer.Stop()
	select {
	case <-freed:
		return nil
	case <-timer.C:
		return &apierr.Error{Kind: apierr.Unavailable, RetryAfter: bodyGateRetryAfter,
			Msg: "this replica already holds its limit of request bodies in flight (LETHE_MAX_BODY_BYTES_IN_FLIGHT); retry, or send smaller requests"}
	case <-c.ctx.Done():
		return c.ctx.Err()
	}
}

// release returns everything c holds.
func (c *bodyCharge) release() {
	if c.held == 0 {
		return
	}
	g := c.g
	g.mu.Lock()
	g.used -= c.held
	if g.waiting > 0 {
		close(g.freed)
		g.freed = make(chan struct{})
	}
	g.mu.Unlock()
	g.inUse.Add(-c.held)
	c.held = 0
}

type chargeKey struct{}

// withBodyCharge opens r's account with the gate once its caller's
// identity is known, for readBody to charge; release ends it.
func (s *Server) withBodyCharge(r *http.Request, id auth.Identity) (*http.Request, func()) {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return r, func() {}
	}
	c := s.bodies.open(r.Context(), id.Role >= auth.Operator)
	return r.WithContext(context.WithValue(r.Context(), chargeKey{}, c)), c.release
}

// chargeOf is r's account with the gate; nil when r has none.
func chargeOf(r *http.Request) *bodyCharge {
	c, _ := r.Context().Value(chargeKey{}).(*bodyCharge)
	return c
}

// BodyBytesInFlight is the body bytes the gate holds for requests being
// served.
func (s *Server) BodyBytesInFlight() int64 { return s.bodies.inUse.Load() }

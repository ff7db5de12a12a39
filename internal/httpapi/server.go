// Package httpapi serves lethe's whole HTTP surface: Queen MQ's API v1 over
// the engine, and the retention, maintenance and metrics routes. Every route
// is registered in one table with the role it needs (routes.go); handlers
// validate their input at the edge (package validate), call the engine or a
// service, and return errors that one function turns into a status and a
// JSON body (respond.go, through package apierr).
package httpapi

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/lethe-mq/lethe/internal/auth"
	"github.com/lethe-mq/lethe/internal/engine"
	"github.com/lethe-mq/lethe/internal/holds"
	"github.com/lethe-mq/lethe/internal/inspect"
	"github.com/lethe-mq/lethe/internal/queueopts"
	"github.com/lethe-mq/lethe/internal/streams"
	"github.com/lethe-mq/lethe/internal/traces"
)

// Defaults for Config.
const (
	// MaxBodyBytesDefault bounds a request body; larger bodies answer 413.
	MaxBodyBytesDefault = 64 << 20
	// MaxLongPollsDefault bounds the pops waiting at once on one replica
	// (LETHE_MAX_LONG_POLLS).
	MaxLongPollsDefault = 1000
	// MaxBodyBytesInFlightDefault bounds the request bodies one replica
	// holds at once (LETHE_MAX_BODY_BYTES_IN_FLIGHT): two of the largest.
	MaxBodyBytesInFlightDefault = 2 * MaxBodyBytesDefault
	// BodyWaitDefault bounds how long a request waits for room under
	// that bound before answering 503.
	BodyWaitDefault = 10 * time.Second
)

// Config wires a Server. Only Engine is required; a nil Maintenance,
// Retention or Metrics leaves their routes answering 404.
type Config struct {
	Engine *engine.Engine
	// Inspect answers the read models; nil builds one over the engine's
	// pool, clock and keys.
	Inspect *inspect.Reader
	// Holds places, releases and lists retention holds; nil builds them
	// over the engine's pool and clock.
	Holds *holds.Service
	// Queues configures and reads queues; nil builds it over the engine.
	Queues       *queueopts.Service
	Logger       *slog.Logger
	MaxBodyBytes int64
	// Auth checks credentials; nil is no authentication.
	Auth *auth.Authenticator
	// Maintenance is maintenance mode (package pushbuffer).
	Maintenance Maintenance
	// Retention serves the retention read models (package retention).
	Retention Retention
	// Metrics serves the Prometheus exposition.
	Metrics http.Handler
	// Observe wraps each route's handler to time it; route is the route's
	// pattern, or "unmatched" for requests no route serves.
	Observe func(route string, next http.Handler) http.Handler
	// MaxLongPolls bounds the pops with wait=true in progress at once;
	// beyond it a pop with wait=true answers 503 with Retry-After.
	MaxLongPolls int
	// MaxBodyBytesInFlight bounds the request bodies held at once, in
	// bytes; a request waits up to BodyWait for room, then answers 503
	// with Retry-After.
	MaxBodyBytesInFlight int64
	BodyWait             time.Duration
	// Timeouts of the connection; zero fields take their defaults.
	Timeouts Timeouts
	// Streams serves the streams API and Traces the message traces; nil
	// leaves their routes answering 404.
	Streams *streams.Service
	Traces  *traces.Service
	// TestClock, set only with LETHE_TEST_CLOCK=1, adds the test-only
	// routes (tiers.go); nil: they do not exist.
	TestClock TestClock
}

// Server is the HTTP front of one lethe replica.
type Server struct {
	eng       *engine.Engine
	inspect   *inspect.Reader
	holds     *holds.Service
	queues    *queueopts.Service
	log       *slog.Logger
	maxBody   int64
	mux       *http.ServeMux
	started   time.Time
	auth      *auth.Authenticator
	maint     Maintenance
	retention Retention
	metrics   http.Handler
	observe   func(route string, next http.Handler) http.Handler
	polls     pollGate
	bodies    *bodyGate
	timeouts  Timeouts
	ids       requestIDs
	table     []route
	unmatched http.Handler
	streams   *streams.Service
	traces    *traces.Service
}

// New builds the server and its routes.
func New(cfg Config) *Server {
	s := &Server{
		eng:       cfg.Engine,
		inspect:   cfg.Inspect,
		holds:     cfg.Holds,
		queues:    cfg.Queues,
		log:       cmp.Or(cfg.Logger, slog.Default()),
		maxBody:   cmp.Or(cfg.MaxBodyBytes, MaxBodyBytesDefault),
		mux:       http.NewServeMux(),
		started:   time.Now(),
		auth:      cfg.Auth,
		maint:     cfg.Maintenance,
		retention: cfg.Retention,
		metrics:   cfg.Metrics,
		observe:   cfg.Observe,
		polls:     pollGate{max: int64(cmp.Or(cfg.MaxLongPolls, MaxLongPollsDefault))},
		bodies:    newBodyGate(cmp.Or(cfg.MaxBodyBytesInFlight, MaxBodyBytesInFlightDefault), cmp.Or(cfg.BodyWait, BodyWaitDefault)),
		timeouts:  cfg.Timeouts.withDefaults(),
		ids:       newRequestIDs(),
		streams:   cfg.Streams,
		traces:    cfg.Traces,
	}
	if s.queues == nil && cfg.Engine != nil {
		s.queues = queueopts.New(cfg.Engine)
	}
	if s.inspect == nil && cfg.Engine != nil {
		s.inspect = readerOver(cfg.Engine, s.queues, s.log)
	}
	if s.holds == nil && cfg.Engine != nil {
		s.holds = holds.New(cfg.Engine.Pool(), cfg.Engine.Clock(), s.log)
	}
	if s.observe == nil {
		s.observe = func(_ string, next http.Handler) http.Handler { return next }
	}
	s.unmatched = s.observe(unmatchedRoute, http.HandlerFunc(s.noRoute))
	s.routes()
	if cfg.TestClock != nil {
		s.testRoutes(cfg.TestClock)
	}
	return s
}

// Handler returns the root handler: request ids, panic recovery, the
// body read deadlines, then the route table (whose routes check the
// caller's credential, then charge its body to the bound on bodies in
// flight as it is read).
func (s *Server) Handler() http.Handler {
	return s.withRequestID(s.recoverPanics(s.withBodyDeadline(http.HandlerFunc(s.dispatch))))
}

// LongPolls is the number of pops with wait=true in progress.
func (s *Server) LongPolls() int { return int(s.polls.n.Load()) }

func (s *Server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if err, ok := v.(error); ok && errors.Is(err, http.ErrAbortHandler) {
					panic(v)
				}
				s.log.Error("handler panicked", "request_id", requestID(r), "method", r.Method, "path", r.URL.Path, "panic", v)
				s.fail(w, r, errPanic)
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// readerOver is the read models over eng's pool, clock and keys, counting
// what they cannot read with eng's hooks, reading queues' options from
// queues.
func readerOver(eng *engine.Engine, queues *queueopts.Service, log *slog.Logger) *inspect.Reader {
	h := eng.Hooks()
	return inspect.New(inspect.Config{Pool: eng.Pool(), Clock: eng.Clock(), Logger: log, Keys: eng.Keys(),
		QueueOptions: func(ctx context.Context, queue string) (any, error) {
			q, err := queues.Get(ctx, queue)
			if err != nil {
				return nil, err
			}
			return q.Options, nil
		},
		Unreadable: h.Unreadable, PartitionFailed: h.PartitionFailed})
}

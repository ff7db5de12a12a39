// Package httpapi serves Queen MQ's HTTP API v1 over the engine. Handlers
// decode and validate, call the engine, and map errors to status codes in one
// place (errors.go).
package httpapi

import (
	"cmp"
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/lethe-mq/lethe/api"
	"github.com/lethe-mq/lethe/internal/engine"
)

// MaxBodyBytesDefault bounds a request body; larger bodies answer 413.
const MaxBodyBytesDefault = 64 << 20

// Config wires a Server.
type Config struct {
	Engine       *engine.Engine
	Logger       *slog.Logger
	MaxBodyBytes int64
	Auth         Auth
	// Maintenance buffers pushes while push maintenance is on; nil: never.
	Maintenance PushBuffer
	// Extra registers routes owned by other packages (retention, metrics,
	// maintenance) on the same mux.
	Extra []func(mux *http.ServeMux)
	// Tiers serves the retention tier routes; TestClock, set only with
	// LETHE_TEST_CLOCK=1, adds the test-only ones (tiers.go).
	Tiers     Tiers
	TestClock TestClock
}

// Server is the HTTP front of one lethe replica.
type Server struct {
	eng     *engine.Engine
	log     *slog.Logger
	maxBody int64
	mux     *http.ServeMux
	started time.Time
	auth    Auth
	buffer  PushBuffer
}

// PushBuffer is maintenance mode as the handlers see it.
type PushBuffer interface {
	// Active reports whether pushes go to the local buffer.
	Active(ctx context.Context) bool
	// PopPaused reports whether pops answer empty.
	PopPaused(ctx context.Context) bool
	// Buffer stores items durably and answers them as buffered.
	Buffer(ctx context.Context, items []api.PushItem) ([]api.PushResult, error)
}

// New builds the server and its routes.
func New(cfg Config) *Server {
	s := &Server{
		eng:     cfg.Engine,
		log:     cmp.Or(cfg.Logger, slog.Default()),
		maxBody: cmp.Or(cfg.MaxBodyBytes, MaxBodyBytesDefault),
		mux:     http.NewServeMux(),
		started: time.Now(),
		auth:    cfg.Auth,
		buffer:  cfg.Maintenance,
	}
	s.routes()
	s.tierRoutes(cfg.Tiers, cfg.TestClock)
	for _, register := range cfg.Extra {
		register(s.mux)
	}
	return s
}

// Handler returns the root handler.
func (s *Server) Handler() http.Handler { return s.recoverPanics(s.requireToken(s.mux)) }

// Mux exposes the route table so other packages can add routes.
func (s *Server) Mux() *http.ServeMux { return s.mux }

func (s *Server) routes() {
	m := s.mux
	m.HandleFunc("GET /health", s.health)
	m.HandleFunc("POST /api/v1/push", s.push)
	m.HandleFunc("GET /api/v1/pop", s.pop)
	m.HandleFunc("GET /api/v1/pop/queue/{queue}", s.pop)
	m.HandleFunc("GET /api/v1/pop/queue/{queue}/partition/{partition}", s.pop)
	m.HandleFunc("POST /api/v1/ack", s.ack)
	m.HandleFunc("POST /api/v1/ack/batch", s.ackBatch)
	m.HandleFunc("POST /api/v1/transaction", s.transaction)
	m.HandleFunc("POST /api/v1/lease/{leaseId}/extend", s.extendLease)
	m.HandleFunc("POST /api/v1/configure", s.configure)
	m.HandleFunc("GET /api/v1/resources/queues", s.listQueues)
	m.HandleFunc("GET /api/v1/resources/queues/{queue}", s.getQueue)
	m.HandleFunc("DELETE /api/v1/resources/queues/{queue}", s.deleteQueue)
	s.adminRoutes()
	m.HandleFunc("/", s.notFound)
}

func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusNotFound, errorBody("no route for "+r.Method+" "+r.URL.Path+"; see the API reference in docs/api.md"))
}

func (s *Server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.Error("handler panicked", "method", r.Method, "path", r.URL.Path, "panic", v)
				writeJSON(w, http.StatusInternalServerError, errorBody("internal error"))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	if err := s.eng.Pool().Ping(r.Context()); err != nil {
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"status": "unhealthy", "database": "unreachable", "error": err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "healthy", "database": "connected", "engine": "lethe",
		"uptimeSeconds": int(time.Since(s.started).Seconds())})
}

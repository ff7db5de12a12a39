package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/lethe-mq/lethe/api"
	"github.com/lethe-mq/lethe/internal/engine"
)

// Tiers is the retention loop as the tier routes see it.
type Tiers interface {
	// View lists the time partitions, the held area and tier changes.
	View(ctx context.Context) (*api.RetentionView, error)
	// Explain states the bounds of a message's life in a queue.
	Explain(ctx context.Context, queue string) (*api.RetentionExplain, error)
	// RunFull runs one whole retention cycle, the tier check included,
	// and answers what it did.
	RunFull(ctx context.Context) (any, error)
}

// TestClock is the replica's clock as POST /api/v1/test/clock moves it.
type TestClock interface {
	Now() time.Time
	Advance(d time.Duration) error
}

// tierRoutes registers the retention tier routes (docs/api.md), and the
// test-only ones when the replica runs with LETHE_TEST_CLOCK=1: without it
// they do not exist.
func (s *Server) tierRoutes(tiers Tiers, clk TestClock) {
	if tiers == nil {
		return
	}
	m := s.mux
	m.HandleFunc("GET /api/v1/retention/tiers", func(w http.ResponseWriter, r *http.Request) {
		s.answer(w, r)(tiers.View(r.Context()))
	})
	m.HandleFunc("GET /api/v1/retention/explain/{queue}", func(w http.ResponseWriter, r *http.Request) {
		if _, err := s.eng.GetQueue(r.Context(), r.PathValue("queue")); err != nil {
			s.fail(w, r, err) // 404 for a queue that does not exist
			return
		}
		s.answer(w, r)(tiers.Explain(r.Context(), r.PathValue("queue")))
	})
	m.HandleFunc("POST /api/v1/retention/changes/{queue}/confirm", func(w http.ResponseWriter, r *http.Request) {
		if !s.requireOperator(w, r) {
			return
		}
		s.answer(w, r)(s.eng.ConfirmTierChange(r.Context(), r.PathValue("queue")))
	})
	if clk == nil {
		return
	}
	m.HandleFunc("POST /api/v1/test/clock", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Advance string `json:"advance"`
		}
		if err := s.decode(w, r, &req); err != nil {
			s.fail(w, r, err)
			return
		}
		d, err := time.ParseDuration(req.Advance)
		if err == nil {
			err = clk.Advance(d)
		}
		if err != nil {
			s.fail(w, r, fmt.Errorf("%w: advance must be a positive duration such as 36h or 90m: %v", engine.ErrInvalid, err))
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"now": clk.Now()})
	})
	m.HandleFunc("POST /api/v1/test/retention/run", func(w http.ResponseWriter, r *http.Request) {
		s.answer(w, r)(tiers.RunFull(r.Context()))
	})
}

// answer writes v as 200, or the error.
func (s *Server) answer(w http.ResponseWriter, r *http.Request) func(v any, err error) {
	return func(v any, err error) {
		if err != nil {
			s.fail(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, v)
	}
}

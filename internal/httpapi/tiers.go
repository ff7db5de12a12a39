package httpapi

import (
	"net/http"
	"time"

	"github.com/lethe-mq/lethe/internal/apierr"
)

// TestClock is the replica's clock as POST /api/v1/test/clock moves it.
type TestClock interface {
	Now() time.Time
	Advance(d time.Duration) error
}

// retentionTiers answers the time partitions, the held area and the tier
// changes (GET /api/v1/retention/tiers).
func (s *Server) retentionTiers(w http.ResponseWriter, r *http.Request) error {
	if s.retention == nil {
		return errNoRetention
	}
	v, err := s.inspect.RetentionView(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

// retentionExplain states the bounds of a message's life in a queue.
func (s *Server) retentionExplain(w http.ResponseWriter, r *http.Request) error {
	if s.retention == nil {
		return errNoRetention
	}
	name, err := pathName(r, "queue")
	if err != nil {
		return err
	}
	if _, err := s.queues.Get(r.Context(), name); err != nil {
		return err // 404 for a queue that does not exist
	}
	ex, err := s.retention.Explain(r.Context(), name)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ex)
	return nil
}

// confirmTierChange applies the shortening awaiting confirmation on a
// queue (operator).
func (s *Server) confirmTierChange(w http.ResponseWriter, r *http.Request) error {
	name, err := pathName(r, "queue")
	if err != nil {
		return err
	}
	c, err := s.queues.ConfirmTierChange(r.Context(), name)
	if err != nil {
		return err
	}
	s.log.Info("retention change confirmed over HTTP", "request_id", requestID(r), "queue", name)
	writeJSON(w, http.StatusOK, c)
	return nil
}

// testRoutes registers the test-only routes, which exist only when the
// replica runs with LETHE_TEST_CLOCK=1 (docs/api.md marks them "test
// clock only").
func (s *Server) testRoutes(clk TestClock) {
	s.handleDoc("POST /api/v1/test/clock", operator, testOnlyDocRole, func(w http.ResponseWriter, r *http.Request) error {
		return s.advanceClock(w, r, clk)
	})
	s.handleDoc("POST /api/v1/test/retention/run", operator, testOnlyDocRole, s.runRetention)
}

// testOnlyDocSuffix marks a test-only route's role in docs/api.md's route
// table; testOnlyDocRole is that role.
const (
	testOnlyDocSuffix = "; test clock only"
	testOnlyDocRole   = "operator" + testOnlyDocSuffix
)

func (s *Server) advanceClock(w http.ResponseWriter, r *http.Request, clk TestClock) error {
	var req struct {
		Advance string `json:"advance"`
	}
	if err := s.decode(w, r, &req); err != nil {
		return err
	}
	d, err := time.ParseDuration(req.Advance)
	if err == nil {
		err = clk.Advance(d)
	}
	if err != nil {
		return apierr.Field(apierr.Invalid, "advance",
			"advance must be a positive duration such as 36h or 90m (the clock only moves forward), got %q", req.Advance)
	}
	writeJSON(w, http.StatusOK, map[string]any{"now": clk.Now()})
	return nil
}

func (s *Server) runRetention(w http.ResponseWriter, r *http.Request) error {
	if s.retention == nil {
		return errNoRetention
	}
	res, err := s.retention.RunFull(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

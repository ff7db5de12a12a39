package httpapi

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/apierr"
	"github.com/lethe-mq/lethe/internal/inspect"
	"github.com/lethe-mq/lethe/internal/retention"
)

// Retention is what the retention routes read (package retention's
// Service).
type Retention interface {
	Status(ctx context.Context, queue string) (*retention.Status, error)
	// Explain states the bounds of a message's life in a queue.
	Explain(ctx context.Context, queue string) (*api.RetentionExplain, error)
	// Doctor checks the deployment against the checkpoints of
	// trustworthy retention.
	Doctor(ctx context.Context) *api.DoctorReport
	// RunFull runs one whole retention cycle, the tier check included,
	// and answers what it did (the test-only run route).
	RunFull(ctx context.Context) (*api.RetentionRun, error)
}

// Bounds of the retention routes' parameters.
const (
	historyLimitDefault = 100
	historyLimitMax     = 1000
	historySpanDefault  = 7 * 24 * time.Hour
	analyticsSpan       = 24 * time.Hour
	rangeMax            = 400 * 24 * time.Hour
)

var errNoRetention = apierr.New(apierr.NotFound, "this server has no retention service")

func (s *Server) retentionStatus(w http.ResponseWriter, r *http.Request) error {
	if s.retention == nil {
		return errNoRetention
	}
	q, err := query(r)
	if err != nil {
		return err
	}
	names, err := queryNames(q, "queue")
	if err != nil {
		return err
	}
	st, err := s.retention.Status(r.Context(), names["queue"])
	if errors.Is(err, retention.ErrUnknownQueue) {
		return apierr.Field(apierr.NotFound, "queue", "queue %q does not exist", names["queue"])
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, st)
	return nil
}

// doctor answers the deployment's checks (package doctor); a failing
// check is in the answer, not an error of the request.
func (s *Server) doctor(w http.ResponseWriter, r *http.Request) error {
	if s.retention == nil {
		return errNoRetention
	}
	writeJSON(w, http.StatusOK, s.retention.Doctor(r.Context()))
	return nil
}

func (s *Server) retentionHistory(w http.ResponseWriter, r *http.Request) error {
	if s.retention == nil {
		return errNoRetention
	}
	hq, err := historyQuery(r, s.eng.Clock().Now())
	if err != nil {
		return err
	}
	entries, err := s.inspect.RetentionHistory(r.Context(), hq)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"timeRange": inspect.TimeRange{From: hq.From, To: hq.To}, "entries": entries})
	return nil
}

// historyQuery reads queue, rule, lostOnly, limit, and the range: from/to,
// or since (a duration back from to).
func historyQuery(r *http.Request, now time.Time) (inspect.HistoryQuery, error) {
	var hq inspect.HistoryQuery
	q, err := query(r)
	if err != nil {
		return hq, err
	}
	names, err := queryNames(q, "queue")
	if err != nil {
		return hq, err
	}
	span := historySpanDefault
	if v := q.Get("since"); v != "" {
		if span, err = time.ParseDuration(v); err != nil || span <= 0 {
			return hq, apierr.Field(apierr.Invalid, "since", "since must be a positive duration such as 24h or 90m, got %q", v)
		}
	}
	hq = inspect.HistoryQuery{Queue: names["queue"], Rule: q.Get("rule"), Limit: historyLimitDefault}
	if hq.From, hq.To, err = window(q, now, span, rangeMax); err != nil {
		return hq, err
	}
	if hq.Rule != "" && !slices.Contains(api.HistoryRules, hq.Rule) {
		return hq, apierr.Field(apierr.Invalid, "rule", "rule must be one of %s; got %q",
			strings.Join(api.HistoryRules, ", "), hq.Rule)
	}
	if hq.LostOnly, err = boolParam(q.Get("lostOnly"), "lostOnly", false); err != nil {
		return hq, err
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > historyLimitMax {
			return hq, apierr.Field(apierr.Invalid, "limit", "limit must be a whole number from 1 to %d, got %q", historyLimitMax, v)
		}
		hq.Limit = n
	}
	return hq, nil
}

func (s *Server) retentionAnalytics(w http.ResponseWriter, r *http.Request) error {
	if s.retention == nil {
		return errNoRetention
	}
	q, err := query(r)
	if err != nil {
		return err
	}
	names, err := queryNames(q, "queue")
	if err != nil {
		return err
	}
	from, to, err := window(q, s.eng.Clock().Now(), analyticsSpan, rangeMax)
	if err != nil {
		return err
	}
	series, err := s.inspect.RetentionAnalytics(r.Context(), from, to, names["queue"])
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, series)
	return nil
}

func (s *Server) postgresStats(w http.ResponseWriter, r *http.Request) error {
	st, err := s.inspect.PostgresStats(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, st)
	return nil
}

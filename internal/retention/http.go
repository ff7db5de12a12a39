package retention

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Bounds of the HTTP parameters.
const (
	historyLimitDefault = 100
	historyLimitMax     = 1000
	analyticsRangeMax   = 400 * 24 * time.Hour
)

// Routes registers the retention endpoints (pass it in httpapi.Config.Extra).
// All are read-only; the server's token check applies to them.
func (s *Service) Routes(mux *http.ServeMux) {
	mux.HandleFunc("GET /api/v1/retention/status", s.handleStatus)
	mux.HandleFunc("GET /api/v1/retention/history", s.handleHistory)
	mux.HandleFunc("GET /api/v1/analytics/retention", s.handleAnalytics)
	mux.HandleFunc("GET /api/v1/analytics/postgres-stats", s.handlePostgresStats)
}

// badRequest is a caller's mistake, answered 400 with its message.
type badRequest struct{ msg string }

func (e badRequest) Error() string { return e.msg }

func badRequestf(format string, args ...any) error { return badRequest{fmt.Sprintf(format, args...)} }

func (s *Service) handleStatus(w http.ResponseWriter, r *http.Request) {
	st, err := s.Status(r.Context(), r.URL.Query().Get("queue"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

func (s *Service) handleHistory(w http.ResponseWriter, r *http.Request) {
	qs := r.URL.Query()
	span := 7 * 24 * time.Hour
	if v := qs.Get("since"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			s.fail(w, r, badRequestf("since must be a positive duration such as 24h or 90m, got %q", v))
			return
		}
		span = d
	}
	from, to, err := s.timeRange(qs.Get("from"), qs.Get("to"), span)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	q := HistoryQuery{Queue: qs.Get("queue"), Rule: qs.Get("rule"), From: from, To: to, Limit: historyLimitDefault}
	switch q.Rule {
	case "", RuleRetention, RuleCompletedRetention, RuleMaxWait, RulePartitionCleanup, RuleTierDrop, RuleHeldDrop,
		RuleTierChange, RuleHeldMove, RuleTierMove, RuleQuarantinePurge:
	default:
		s.fail(w, r, badRequestf("rule must be one of %s; got %q", strings.Join([]string{RuleRetention,
			RuleCompletedRetention, RuleMaxWait, RulePartitionCleanup, RuleTierDrop, RuleHeldDrop, RuleTierChange,
			RuleHeldMove, RuleTierMove, RuleQuarantinePurge}, ", "), q.Rule))
		return
	}
	if v := qs.Get("lostOnly"); v != "" {
		if q.LostOnly, err = strconv.ParseBool(v); err != nil {
			s.fail(w, r, badRequestf("lostOnly must be true or false, got %q", v))
			return
		}
	}
	if v := qs.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > historyLimitMax {
			s.fail(w, r, badRequestf("limit must be a whole number from 1 to %d, got %q", historyLimitMax, v))
			return
		}
		q.Limit = n
	}
	entries, err := s.History(r.Context(), q)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"timeRange": TimeRange{From: from, To: to}, "entries": entries})
}

func (s *Service) handleAnalytics(w http.ResponseWriter, r *http.Request) {
	qs := r.URL.Query()
	from, to, err := s.timeRange(qs.Get("from"), qs.Get("to"), 24*time.Hour)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	series, err := s.RetentionAnalytics(r.Context(), from, to, qs.Get("queue"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, series)
}

func (s *Service) handlePostgresStats(w http.ResponseWriter, r *http.Request) {
	st, err := s.PostgresStats(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

// timeRange reads from and to (RFC 3339 or YYYY-MM-DD); to defaults to now
// and from to span before to.
func (s *Service) timeRange(fromStr, toStr string, span time.Duration) (time.Time, time.Time, error) {
	to := s.cfg.Clock.Now()
	if toStr != "" {
		t, err := parseTime(toStr)
		if err != nil {
			return time.Time{}, time.Time{}, badRequestf("to: %v", err)
		}
		to = t
	}
	from := to.Add(-span)
	if fromStr != "" {
		t, err := parseTime(fromStr)
		if err != nil {
			return time.Time{}, time.Time{}, badRequestf("from: %v", err)
		}
		from = t
	}
	if !from.Before(to) {
		return time.Time{}, time.Time{}, badRequestf("from (%s) must be before to (%s)", from.Format(time.RFC3339), to.Format(time.RFC3339))
	}
	if to.Sub(from) > analyticsRangeMax {
		return time.Time{}, time.Time{}, badRequestf("the range from %s to %s is longer than %d days; narrow it",
			from.Format(time.RFC3339), to.Format(time.RFC3339), int(analyticsRangeMax.Hours()/24))
	}
	return from.UTC(), to.UTC(), nil
}

func parseTime(v string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%q is not an RFC 3339 time (2026-08-05T10:00:00Z) or a date (2026-08-05)", v)
}

func (s *Service) fail(w http.ResponseWriter, r *http.Request, err error) {
	var bad badRequest
	switch {
	case errors.As(err, &bad):
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": bad.msg})
	case errors.Is(err, ErrUnknownQueue):
		writeJSON(w, http.StatusNotFound, map[string]string{"error": err.Error()})
	case r.Context().Err() != nil:
		writeJSON(w, 499, map[string]string{"error": "request cancelled"})
	default:
		s.cfg.Logger.Error("request failed", "method", r.Method, "path", r.URL.Path, "error", err)
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "internal error: " + err.Error()})
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

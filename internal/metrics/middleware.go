package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Observe times a route's requests by status code; route is the label (the
// route's pattern). The HTTP layer wraps each route with it when it
// registers the route (httpapi.Config.Observe).
func (m *Metrics) Observe(route string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		m.duration.WithLabelValues(route, strconv.Itoa(rec.code())).Observe(time.Since(start).Seconds())
	})
}

// statusRecorder remembers the status code a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// Flush keeps streaming answers streaming.
func (s *statusRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		if s.status == 0 {
			s.status = http.StatusOK
		}
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the real writer.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

func (s *statusRecorder) code() int {
	if s.status == 0 {
		return http.StatusOK
	}
	return s.status
}

// WatchLongPolls adds lethe_long_polls_waiting, read from count at scrape
// time.
func (m *Metrics) WatchLongPolls(count func() int) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "lethe_long_polls_waiting",
		Help: "Pops with wait=true in progress on this replica (bounded by LETHE_MAX_LONG_POLLS).",
	}, func() float64 { return float64(count()) }))
}

// WatchBodies adds lethe_http_body_bytes_in_flight, read from bytes at
// scrape time.
func (m *Metrics) WatchBodies(bytes func() int64) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "lethe_http_body_bytes_in_flight",
		Help: "Declared bytes of the request bodies this replica is serving (bounded by LETHE_MAX_BODY_BYTES_IN_FLIGHT).",
	}, func() float64 { return float64(bytes()) }))
}

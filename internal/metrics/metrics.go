// Package metrics exposes a replica's Prometheus metrics: engine counters
// fed by engine.Hooks, an HTTP latency histogram, and gauges read from
// PostgreSQL at scrape time. Each replica has its own registry, so several
// replicas in one process (tests) do not collide.
package metrics

import (
	"cmp"
	"log/slog"
	"net/http"
	"sync"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/lethe-mq/lethe/internal/clock"
	"github.com/lethe-mq/lethe/internal/engine"
)

// MaxQueueLabelsDefault bounds the distinct queue labels the counters keep;
// pushes to further queues count under queue="__other__" so a producer that
// invents queue names cannot grow the replica's memory without bound.
const MaxQueueLabelsDefault = 10_000

// MaxQueueSeriesDefault bounds the per-queue gauges read at scrape time:
// with more queues than this, only the deepest ones are reported
// (lethe_queues still counts them all), so a deployment with many small
// queues cannot blow up the scrape or Prometheus' label cardinality.
const MaxQueueSeriesDefault = 1000

// otherQueue is the label of queues past MaxQueueLabels.
const otherQueue = "__other__"

// Config wires Metrics.
type Config struct {
	// Pool is read at scrape time for the queue gauges; nil leaves them out.
	Pool           *pgxpool.Pool
	Logger         *slog.Logger
	MaxQueueLabels int
	MaxQueueSeries int
	// Clock times the loss-time cache of the queue gauges; nil is the real
	// clock.
	Clock clock.Clock
}

// Metrics is one replica's registry and instruments.
type Metrics struct {
	reg       *prometheus.Registry
	pushed    *prometheus.CounterVec
	delivered *prometheus.CounterVec
	acks      *prometheus.CounterVec
	// unreadable and failed count stored data that could not be served.
	unreadable *prometheus.CounterVec
	failed     *prometheus.CounterVec
	// expired counts messages passed undelivered past their queue's ttl.
	expired *prometheus.CounterVec
	// gaps counts messages pops told a group it lost unread.
	gaps     *prometheus.CounterVec
	duration *prometheus.HistogramVec
	// groups is the appender's commit groups by how many partitions each
	// wrote in one transaction.
	groups prometheus.Histogram

	maxQueues int
	mu        sync.RWMutex
	queues    map[string]struct{}
}

// New builds the registry with the Go and process collectors, the engine
// counters, the HTTP histogram and, with a pool, the database gauges.
func New(cfg Config) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		pushed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lethe_messages_pushed_total",
			Help: "Messages appended, by queue (duplicates included: they were answered).",
		}, []string{"queue"}),
		delivered: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lethe_messages_delivered_total",
			Help: "Messages handed out by pops, by queue and consumer group.",
		}, []string{"queue", "group"}),
		acks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lethe_acks_total",
			Help: "Acknowledgements applied, by queue, consumer group and status (completed, failed, dlq).",
		}, []string{"queue", "group", "status"}),
		unreadable: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lethe_messages_unreadable_total",
			Help: "Stored messages that could not be served (a damaged frame, a payload that is not JSON), by queue: a pop dead-letters them, a browse skips them. Each is logged.",
		}, []string{"queue"}),
		expired: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lethe_messages_expired_total",
			Help: "Messages a consumer group passed without delivery because they were older than the queue's ttl, by queue and group.",
		}, []string{"queue", "group"}),
		gaps: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lethe_consumer_gap_messages_total",
			Help: "Messages pops told a consumer group it lost unread (the gaps of pop responses: retention deleted them before the group consumed them), by queue and group. Each gap is logged.",
		}, []string{"queue", "group"}),
		failed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lethe_partitions_failed_total",
			Help: "Times a partition was skipped because its stored state could not be served, by queue and operation (pop, ack, browse); the other partitions were served. Each is logged with its error.",
		}, []string{"queue", "op"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "lethe_http_request_duration_seconds",
			Help: "HTTP request latency by route pattern and status code; long polls land in the high buckets.",
			// Up to a minute: a long-polling pop waits 30 s by default.
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"route", "code"}),
		groups: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "lethe_commit_group_partitions",
			Help:    "Commit groups of the push path by how many partitions' segments each wrote in one transaction (at most 128): pushes spread over many partitions share a commit when this is above 1.",
			Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128},
		}),
		maxQueues: cmp.Or(cfg.MaxQueueLabels, MaxQueueLabelsDefault),
		queues:    map[string]struct{}{},
	}
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.pushed, m.delivered, m.acks, m.unreadable, m.expired, m.gaps, m.failed, m.duration, m.groups,
	)
	if cfg.Pool != nil {
		m.reg.MustRegister(newDBCollector(cfg.Pool, cmp.Or(cfg.Logger, slog.Default()), cmp.Or[clock.Clock](cfg.Clock, clock.Real{}), cmp.Or(cfg.MaxQueueSeries, MaxQueueSeriesDefault)))
	}
	return m
}

// Registry lets other packages add their own collectors.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Hooks are the engine callbacks that move the counters.
func (m *Metrics) Hooks() engine.Hooks {
	return engine.Hooks{
		Pushed: func(queue string, n int) {
			m.pushed.WithLabelValues(m.queueLabel(queue)).Add(float64(n))
		},
		Delivered: func(queue, group string, n int) {
			m.delivered.WithLabelValues(m.queueLabel(queue), group).Add(float64(n))
		},
		Acked: func(queue, group, status string, n int) {
			m.acks.WithLabelValues(m.queueLabel(queue), group, status).Add(float64(n))
		},
		Unreadable: func(queue string, n int) {
			m.unreadable.WithLabelValues(m.queueLabel(queue)).Add(float64(n))
		},
		Expired: func(queue, group string, n int) {
			m.expired.WithLabelValues(m.queueLabel(queue), group).Add(float64(n))
		},
		Gap: func(queue, group string, n int) {
			m.gaps.WithLabelValues(m.queueLabel(queue), group).Add(float64(n))
		},
		PartitionFailed: func(queue, op string) {
			m.failed.WithLabelValues(m.queueLabel(queue), op).Inc()
		},
		CommitGroup: func(partitions int) {
			m.groups.Observe(float64(partitions))
		},
	}
}

// Handler serves the text exposition; httpapi routes /metrics/prometheus
// (Queen's path) and /metrics to it.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		// A failing collector drops its series, not the whole scrape.
		ErrorHandling: promhttp.ContinueOnError,
	})
}

// queueLabel returns queue, or otherQueue once MaxQueueLabels distinct
// queues have been seen.
func (m *Metrics) queueLabel(queue string) string {
	m.mu.RLock()
	_, seen := m.queues[queue]
	full := len(m.queues) >= m.maxQueues
	m.mu.RUnlock()
	if seen {
		return queue
	}
	if full {
		return otherQueue
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.queues) >= m.maxQueues {
		return otherQueue
	}
	m.queues[queue] = struct{}{}
	return queue
}

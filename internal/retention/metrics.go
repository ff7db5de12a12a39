package retention

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lethe-mq/lethe/internal/store"
)

// collectors are the loop's Prometheus instruments. They count whether or
// not anyone registered them; Register exposes them.
type collectors struct {
	segments          *prometheus.CounterVec
	frames            *prometheus.CounterVec
	bytes             *prometheus.CounterVec
	txnsPurged        prometheus.Counter
	partitionsDeleted prometheus.Counter
	metricsPurged     *prometheus.CounterVec
	purgeFailures     prometheus.Counter
	stepFailures      *prometheus.CounterVec
	cycles            *prometheus.CounterVec
	skipped           prometheus.Counter
	cycleDuration     prometheus.Histogram
	oldestAge         *prometheus.GaugeVec
	windowLag         *prometheus.GaugeVec
	moved             *prometheus.CounterVec
	leavesDropped     *prometheus.CounterVec
	heldMessages      *prometheus.GaugeVec
	heldBytes         *prometheus.GaugeVec
	quarantined       *prometheus.GaugeVec
	reclaimed         *prometheus.CounterVec
}

func newCollectors() *collectors {
	return &collectors{
		segments: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lethe_retention_deleted_segments_total",
			Help: "Segment rows deleted by the retention loop, by rule (retention, completed_retention, max_wait).",
		}, []string{"rule"}),
		frames: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lethe_retention_deleted_frames_total",
			Help: "Messages deleted by the retention loop, by rule.",
		}, []string{"rule"}),
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lethe_retention_deleted_bytes_total",
			Help: "Frame bytes deleted by the retention loop, by rule (before TOAST compression).",
		}, []string{"rule"}),
		txnsPurged: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "lethe_retention_txns_purged_total",
			Help: "Transaction-id hashes purged from the sidecar past their window.",
		}),
		partitionsDeleted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "lethe_retention_partitions_deleted_total",
			Help: "Empty, idle partitions deleted by the cleanup phase.",
		}),
		metricsPurged: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lethe_retention_metrics_purged_rows_total",
			Help: "Rows aged out by the metrics purge, by table (history, cycle records, dead letters).",
		}, []string{"table"}),
		purgeFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "lethe_retention_metrics_purge_failures_total",
			Help: "Metrics purge statements that failed (logged and swallowed; the cycle went on).",
		}),
		stepFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lethe_retention_step_failures_total",
			Help: "Steps that failed, by phase (worklist, retention, txns, eviction, reclaim, cleanup); each is logged with its partition and error, and the cycle goes on with the rest.",
		}, []string{"phase"}),
		cycles: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lethe_retention_cycles_total",
			Help: "Cycles this replica ran while holding the lock, by outcome (swept, idle, failed).",
		}, []string{"outcome"}),
		skipped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "lethe_retention_cycles_skipped_total",
			Help: "Cycles this replica skipped because another replica held the retention lock.",
		}),
		cycleDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "lethe_retention_cycle_duration_seconds",
			Help:    "Duration of the cycles this replica ran while holding the lock.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300},
		}),
		oldestAge: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "lethe_retention_oldest_data_age_seconds",
			Help: "Age of the oldest retained message of each queue, as the sweeping replica saw it at the start of its last cycle.",
		}, []string{"queue"}),
		windowLag: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "lethe_retention_window_lag_seconds",
			Help: "Seconds by which each queue's oldest retained message is older than its window: how far the footprint on disk lags the configured retention (whole segments, the sweep interval, a stalled consumer group).",
		}, []string{"queue"}),
		moved: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lethe_retention_moved_frames_total",
			Help: "Messages moved by the tier check and tier changes, by rule (held_move: to the held area; tier_move: into the queue's tier).",
		}, []string{"rule"}),
		leavesDropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lethe_retention_leaves_dropped_total",
			Help: "Time partitions (leaves) dropped whole, by tier (1w, 3w, 7w, forever, held, txns).",
		}, []string{"tier"}),
		heldMessages: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "lethe_held_messages",
			Help: "Messages of each queue in the held area (pending when their partition expired), counted at the last tier check.",
		}, []string{"queue"}),
		heldBytes: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "lethe_held_bytes",
			Help: "Frame bytes of each queue in the held area, counted at the last tier check.",
		}, []string{"queue"}),
		quarantined: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "lethe_quarantined_messages",
			Help: "Dead letters of each queue not yet replayed or deleted, counted at the last tier check.",
		}, []string{"queue"}),
		reclaimed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lethe_retention_reclaimed_rows_total",
			Help: "Rows the reclaim phase deleted outside the segment log, by rule (stream_query_retired, stream_state_idle, trace_retention).",
		}, []string{"rule"}),
	}
}

// Register exposes the retention metrics on reg.
func (s *Service) Register(reg prometheus.Registerer) error {
	m := s.metrics
	for _, c := range []prometheus.Collector{m.segments, m.frames, m.bytes, m.txnsPurged, m.partitionsDeleted,
		m.metricsPurged, m.purgeFailures, m.stepFailures, m.cycles, m.skipped, m.cycleDuration, m.oldestAge, m.windowLag,
		m.moved, m.leavesDropped, m.heldMessages, m.heldBytes, m.quarantined, m.reclaimed} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// observeHeld sets the held and quarantined gauges of every queue.
func (m *collectors) observeHeld(held []store.QueueHeld) {
	m.heldMessages.Reset()
	m.heldBytes.Reset()
	m.quarantined.Reset()
	for _, h := range held {
		m.heldMessages.WithLabelValues(h.Queue).Set(float64(h.Messages))
		m.heldBytes.WithLabelValues(h.Queue).Set(float64(h.Bytes))
		m.quarantined.WithLabelValues(h.Queue).Set(float64(h.Quarantined))
	}
}

func (m *collectors) deleted(rule string, a Amount) {
	m.segments.WithLabelValues(rule).Add(float64(a.Segments))
	m.frames.WithLabelValues(rule).Add(float64(a.Frames))
	m.bytes.WithLabelValues(rule).Add(float64(a.Bytes))
}

// clearQueueGauges drops the per-queue gauges on a replica that is not
// sweeping, so only the sweeping replica reports them (the held gauges
// stay between tier checks on the one that sweeps).
func (m *collectors) clearQueueGauges() {
	m.oldestAge.Reset()
	m.windowLag.Reset()
	m.heldMessages.Reset()
	m.heldBytes.Reset()
	m.quarantined.Reset()
}

// observeQueues sets the per-queue gauges from the work list.
func (m *collectors) observeQueues(work []queueWork, now time.Time) {
	m.oldestAge.Reset()
	m.windowLag.Reset()
	for _, w := range work {
		if w.OldestAt == nil {
			continue
		}
		m.oldestAge.WithLabelValues(w.Queue).Set(now.Sub(*w.OldestAt).Seconds())
		m.windowLag.WithLabelValues(w.Queue).Set(w.WindowLagSeconds)
	}
}

// Package result is the record of one measured figure, shared by the
// scenario packages and the report.
package result

import (
	"slices"

	"github.com/lethe-mq/lethe/bench/internal/meter"
)

// Systems.
const (
	Lethe   = "lethe"
	Ceiling = "ceiling"
	River   = "river"
	NATS    = "nats"
)

// Result is one figure. Value is in Unit; latency figures carry P50/P99
// instead. Ceiling names the Key of the ceiling figure it is compared with.
type Result struct {
	Key        string  `json:"key"` // unique in a run, e.g. "lethe/push/b100/p1/1024"
	System     string  `json:"system"`
	Scenario   string  `json:"scenario"` // push, pop-ack, fanout, e2e-latency, sweep, ...
	Label      string  `json:"label"`    // what a person reads in the table
	Payload    int     `json:"payload_bytes"`
	Batch      int     `json:"batch,omitempty"`
	Clients    int     `json:"clients,omitempty"`
	Partitions int     `json:"partitions,omitempty"`
	Groups     int     `json:"groups,omitempty"`
	Unit       string  `json:"unit"` // "msg/s", "deliveries/s", "frames/s", "ms", "MiB"
	Value      float64 `json:"value"`
	// SpreadMin and SpreadMax are the lowest and highest one-second rates of
	// the window (zero when the window was shorter than two seconds).
	SpreadMin float64        `json:"spread_min,omitempty"`
	SpreadMax float64        `json:"spread_max,omitempty"`
	Latency   *meter.Summary `json:"latency,omitempty"`
	// Baseline is a second latency distribution to compare with (the sweep's
	// push latency without the sweep).
	Baseline   *meter.Summary `json:"baseline_latency,omitempty"`
	Count      int64          `json:"count"`
	Seconds    float64        `json:"seconds"`
	Errors     int64          `json:"errors"`
	FirstError string         `json:"first_error,omitempty"`
	Ceiling    string         `json:"ceiling,omitempty"` // Key of the matching ceiling
	Ratio      float64        `json:"ratio,omitempty"`   // Value / ceiling's Value (latency: p99 / ceiling's p99)
	PeakRSSMiB float64        `json:"lethe_peak_rss_mib,omitempty"`
	Notes      string         `json:"notes,omitempty"`
	Skipped    string         `json:"skipped,omitempty"` // why the figure is missing
	// Profile is set by -profile for the figures whose window was profiled.
	Profile *Profile `json:"profile,omitempty"`
}

// FromOutcome fills the measured fields from a meter outcome.
func (r Result) FromOutcome(o meter.Outcome) Result {
	r.Value = o.Rate
	r.Count = o.Items
	r.Seconds = o.Elapsed.Seconds()
	r.Errors = o.Errors
	r.FirstError = o.FirstError
	if len(o.PerSecond) >= 2 {
		r.SpreadMin, r.SpreadMax = slices.Min(o.PerSecond), slices.Max(o.PerSecond)
	}
	return r
}

// Sink collects results as scenarios finish.
type Sink interface {
	Add(Result)
}

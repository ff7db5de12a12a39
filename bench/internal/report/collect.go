// Package report turns results into results.json, results.md and the
// throughput charts, each lethe and peer figure beside its ratio to the raw
// PostgreSQL ceiling measured in the same run.
package report

import (
	"sync"

	"github.com/lethe-mq/lethe/bench/internal/result"
)

// Meta describes the run.
type Meta struct {
	Started     string            `json:"started"`
	Seconds     float64           `json:"seconds"`
	Mode        string            `json:"mode"` // "full" or "quick"
	Command     string            `json:"command"`
	Machine     string            `json:"machine"`
	Versions    map[string]string `json:"versions"`
	LetheMemory string            `json:"lethe_memory"` // how lethe ran, which decides what its RSS includes
	Notes       []string          `json:"notes,omitempty"`
}

// Collector gathers results from the scenarios; safe for concurrent use.
type Collector struct {
	mu      sync.Mutex
	results []result.Result
}

// Add stores one result.
func (c *Collector) Add(r result.Result) {
	c.mu.Lock()
	c.results = append(c.results, r)
	c.mu.Unlock()
}

// Results returns the results with ratios filled in.
func (c *Collector) Results() []result.Result {
	c.mu.Lock()
	out := append([]result.Result(nil), c.results...)
	c.mu.Unlock()
	byKey := map[string]result.Result{}
	for _, r := range out {
		byKey[r.Key] = r
	}
	for i, r := range out {
		ceil, ok := byKey[r.Ceiling]
		if !ok || r.Skipped != "" || ceil.Skipped != "" {
			continue
		}
		switch {
		case r.Unit == "ms" && r.Latency != nil && ceil.Latency != nil && ceil.Latency.P99 > 0:
			out[i].Ratio = r.Latency.P99 / ceil.Latency.P99
		case r.Unit == "s" && r.Value > 0:
			out[i].Ratio = ceil.Value / r.Value // a duration: 1.00 = as fast as raw, like a throughput's
		case r.Unit != "ms" && ceil.Value > 0:
			out[i].Ratio = r.Value / ceil.Value
		}
	}
	return out
}

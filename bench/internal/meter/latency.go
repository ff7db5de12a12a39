package meter

import (
	"slices"
	"sync"
	"time"
)

// Recorder keeps latency samples; safe for concurrent use. A few hundred
// thousand samples per scenario fit comfortably in memory, so exact
// percentiles are cheaper to get right than a histogram.
type Recorder struct {
	mu sync.Mutex
	v  []time.Duration
}

// Add records one sample.
func (r *Recorder) Add(d time.Duration) {
	r.mu.Lock()
	r.v = append(r.v, d)
	r.mu.Unlock()
}

// Summary is a latency distribution in milliseconds.
type Summary struct {
	Count int     `json:"count"`
	P50   float64 `json:"p50_ms"`
	P99   float64 `json:"p99_ms"`
	Max   float64 `json:"max_ms"`
}

// Summary sorts a copy of the samples and reads the percentiles.
func (r *Recorder) Summary() Summary {
	r.mu.Lock()
	v := slices.Clone(r.v)
	r.mu.Unlock()
	if len(v) == 0 {
		return Summary{}
	}
	slices.Sort(v)
	at := func(q float64) float64 {
		i := int(q * float64(len(v)-1))
		return ms(v[i])
	}
	return Summary{Count: len(v), P50: at(0.50), P99: at(0.99), Max: ms(v[len(v)-1])}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

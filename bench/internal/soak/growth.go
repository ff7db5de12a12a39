package soak

import (
	"fmt"
	"slices"
)

// Growth is one table's trend over a span of the soak.
type Growth struct {
	Table string
	// Mean is its average size over the span, Projected the growth the
	// least-squares slope gives over the whole span, both in bytes.
	Mean, Projected float64
}

func (g Growth) String() string {
	return fmt.Sprintf("%s grew %s over the span, mean %s (%+.0f%%)", g.Table, mib(g.Projected), mib(g.Mean), 100*g.Projected/max(g.Mean, 1))
}

// StillGrowing returns the tables whose size keeps growing over the
// samples from second from on: the least-squares slope of their total
// size, times the span, exceeds rel of their mean size and floor bytes.
// A least-squares slope over many samples is not moved much by one step
// (a table grows by whole extents, and shrinks only when vacuum truncates
// its tail), but a steady climb moves it fully; a table that reached its
// steady state before from has a slope near zero. skip names tables not
// judged here.
func StillGrowing(samples []Sample, from, rel, floor float64, skip ...string) []Growth {
	if len(samples) == 0 {
		return nil
	}
	w := Window{From: from, To: samples[len(samples)-1].Elapsed}
	var out []Growth
	for _, name := range tableNames(samples) {
		if slices.Contains(skip, name) {
			continue
		}
		get := func(s Sample) (float64, bool) {
			t, ok := s.Table(name)
			return float64(t.Total), ok
		}
		g := Growth{Table: name}
		g.Mean, _ = mean(samples, w, get)
		g.Projected = Slope(samples, w, get) * (w.To - w.From)
		if g.Projected > max(rel*g.Mean, floor) {
			out = append(out, g)
		}
	}
	return out
}

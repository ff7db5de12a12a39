package soak

import (
	"fmt"
	"slices"
)

// Growth is one table's trend over a span of the soak.
type Growth struct {
	Table string
	// Mean is its average size over the span, Projected the growth the
	// least-squares slope gives over the whole span, PeakRise how much
	// higher its largest size in the span's second half is than in its
	// first, all in bytes.
	Mean, Projected, PeakRise float64
}

func (g Growth) String() string {
	return fmt.Sprintf("%s grew %s over the span, mean %s (%+.0f%%), its high-water mark %s higher in the span's second half", g.Table, mib(g.Projected), mib(g.Mean), 100*g.Projected/max(g.Mean, 1), mib(g.PeakRise))
}

// StillGrowing returns the tables whose size keeps growing over the
// samples from second from on: the least-squares slope of their total
// size, times the span, exceeds rel of their mean size and floor bytes.
// A least-squares slope over many samples is not moved much by one step
// (a table grows by whole extents, and shrinks only when vacuum truncates
// its tail), but a steady climb moves it fully; a table that reached its
// steady state before from has a slope near zero. A table must also raise
// its high-water mark by half that much: a steady table swings between
// vacuum truncating its tail and pushes refilling it (a sawtooth of 40%
// on a small table), which can tilt a slope over a few samples, while a
// table that keeps growing sets new highs. skip names tables not judged
// here.
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
		if g, growing := growsOver(samples, w, get, rel, floor); growing {
			g.Table = name
			out = append(out, g)
		}
	}
	return out
}

// growsOver says whether a figure keeps growing over w: its least-squares
// growth over w exceeds rel of its mean and floor, and its high-water mark
// in w's second half rose by half that much (see StillGrowing).
func growsOver(samples []Sample, w Window, get func(Sample) (float64, bool), rel, floor float64) (Growth, bool) {
	var g Growth
	g.Mean, _ = mean(samples, w, get)
	g.Projected = Slope(samples, w, get) * (w.To - w.From)
	g.PeakRise = peakRise(samples, w, get)
	limit := max(rel*g.Mean, floor)
	return g, g.Projected > limit && g.PeakRise > limit/2
}

// peakRise is the largest figure in the second half of w less the largest
// in its first half.
func peakRise(samples []Sample, w Window, get func(Sample) (float64, bool)) float64 {
	mid := (w.From + w.To) / 2
	first, _ := peak(samples, Window{From: w.From, To: mid}, get)
	second, _ := peak(samples, Window{From: mid, To: w.To}, get)
	return second - first
}

// peak is the largest figure over w and whether w held one.
func peak(samples []Sample, w Window, get func(Sample) (float64, bool)) (float64, bool) {
	top, found := 0.0, false
	for _, s := range samples {
		if v, ok := get(s); ok && inWindow(s, w) && (!found || v > top) {
			top, found = v, true
		}
	}
	return top, found
}

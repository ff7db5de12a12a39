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
	// Peaks and Troughs are its largest and smallest size in each third
	// of the span.
	Peaks, Troughs [3]float64
}

func (g Growth) String() string {
	return fmt.Sprintf("%s grew %s over the span, mean %s (%+.0f%%), its high-water mark %s higher in the span's second half; by thirds of the span peaks %s, troughs %s",
		g.Table, mib(g.Projected), mib(g.Mean), 100*g.Projected/max(g.Mean, 1), mib(g.PeakRise), mibs(g.Peaks), mibs(g.Troughs))
}

func mibs(v [3]float64) string {
	return fmt.Sprintf("%.1f → %.1f → %.1f MiB", v[0]/(1<<20), v[1]/(1<<20), v[2]/(1<<20))
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
// table that keeps growing sets new highs. And it must keep on growing
// through the span: the peaks, or the troughs, of its thirds (each many
// retention cycles long, so whole teeth of the sawtooth) must each rise
// above the third's before by a sixth of that much. One event (a
// retention cycle that ran late on a busy machine, leaving a taller tooth
// or one more extent) raises one third, or the two after it alike; a
// table that keeps growing raises all three. skip names tables not judged
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
// growth over w exceeds rel of its mean and floor, its high-water mark in
// w's second half rose by half that much, and its peaks or troughs rose
// through w's thirds (see StillGrowing).
func growsOver(samples []Sample, w Window, get func(Sample) (float64, bool), rel, floor float64) (Growth, bool) {
	var g Growth
	g.Mean, _ = mean(samples, w, get)
	g.Projected = Slope(samples, w, get) * (w.To - w.From)
	g.PeakRise = peakRise(samples, w, get)
	limit := max(rel*g.Mean, floor)
	sustained := g.byThirds(samples, w, get, limit/6)
	return g, g.Projected > limit && g.PeakRise > limit/2 && sustained
}

// byThirds fills g's peaks and troughs over the thirds of w and says
// whether either rose from each third to the next by more than step. A
// third without a sample cannot tell: the figure counts as rising.
func (g *Growth) byThirds(samples []Sample, w Window, get func(Sample) (float64, bool), step float64) bool {
	third := (w.To - w.From) / 3
	for i := range 3 {
		part := Window{From: w.From + float64(i)*third, To: w.From + float64(i+1)*third}
		var found bool
		if g.Troughs[i], g.Peaks[i], found = extremes(samples, part, get); !found {
			return true
		}
	}
	return rises(g.Peaks, step) || rises(g.Troughs, step)
}

// rises says whether each of v exceeds the one before by more than step.
func rises(v [3]float64, step float64) bool {
	return v[1]-v[0] > step && v[2]-v[1] > step
}

// peakRise is the largest figure in the second half of w less the largest
// in its first half.
func peakRise(samples []Sample, w Window, get func(Sample) (float64, bool)) float64 {
	mid := (w.From + w.To) / 2
	_, first, _ := extremes(samples, Window{From: w.From, To: mid}, get)
	_, second, _ := extremes(samples, Window{From: mid, To: w.To}, get)
	return second - first
}

// extremes are the smallest and largest figure over w, and whether w
// held one.
func extremes(samples []Sample, w Window, get func(Sample) (float64, bool)) (low, high float64, found bool) {
	for _, s := range samples {
		v, ok := get(s)
		if !ok || !inWindow(s, w) {
			continue
		}
		if !found || v < low {
			low = v
		}
		if !found || v > high {
			high = v
		}
		found = true
	}
	return low, high, found
}

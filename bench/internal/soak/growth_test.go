package soak

import "testing"

// sawtooth is a table of the short soak (a sample every 10 s, 22 of them,
// the second half judged): from 6 MiB it grows a MiB a sample, and each
// third sample a retention cycle takes back what it gained, less climb
// MiB. The first cycle due at or after sample late (none when negative)
// runs one sample late, so its tooth is a MiB taller, and leaves the table
// kept MiB larger from then on (the extents it added stay).
func sawtooth(late int, kept, climb float64) []Sample {
	var mib []float64
	phase, base, delayed := 0, 0.0, false
	for len(mib) < 22 {
		mib = append(mib, 6+float64(phase)+base)
		if phase++; phase < 3 {
			continue
		}
		if late >= 0 && !delayed && len(mib) >= late && len(mib) < 22 {
			delayed = true
			mib = append(mib, 6+3+base)
			base += kept
		}
		phase, base = 0, base+climb
	}
	out := make([]Sample, len(mib))
	for i, m := range mib {
		out[i] = Sample{Elapsed: float64(i) * 10, Tables: []TableSample{{Name: "lethe.segments", Total: int64(m * (1 << 20))}}}
	}
	return out
}

func TestStillGrowingTakesOneLateCycleForNoGrowth(t *testing.T) {
	const from, rel, floor = 105, 0.20, 1 << 20
	if g := StillGrowing(sawtooth(-1, 0, 0), from, rel, floor); len(g) != 0 {
		t.Fatalf("a flat sawtooth: %v", g)
	}
	sawSlopeAlone := false
	for late := 10; late < 22; late++ {
		for _, kept := range []float64{0, 1, 1.5} {
			s := sawtooth(late, kept, 0)
			if g := StillGrowing(s, from, rel, floor); len(g) != 0 {
				t.Errorf("one cycle late at sample %d, leaving %.1f MiB: %v", late, kept, g)
			}
			get := func(s Sample) (float64, bool) { tb, ok := s.Table("lethe.segments"); return float64(tb.Total), ok }
			g, _ := growsOver(s, Window{From: from, To: 210}, get, rel, floor)
			limit := max(rel*g.Mean, floor)
			sawSlopeAlone = sawSlopeAlone || (g.Projected > limit && g.PeakRise > limit/2)
		}
	}
	if !sawSlopeAlone {
		t.Error("no late cycle tilted the slope and raised the high-water mark: the case the thirds are for is not tested")
	}
}

func TestStillGrowingFindsClimbingTroughs(t *testing.T) {
	// Each cycle keeps a MiB more: 3.5 MiB over the judged half, whose
	// mean is about 12 MiB.
	g := StillGrowing(sawtooth(-1, 0, 1), 105, 0.20, 1<<20)
	if len(g) != 1 || g[0].Table != "lethe.segments" {
		t.Fatalf("troughs climbing a MiB a cycle: %v", g)
	}
	if tr := g[0].Troughs; !(tr[0] < tr[1] && tr[1] < tr[2]) {
		t.Fatalf("troughs by thirds %v; want them climbing", tr)
	}
	// With one late cycle on top, still growing.
	if g := StillGrowing(sawtooth(15, 1, 1), 105, 0.20, 1<<20); len(g) != 1 {
		t.Fatalf("climbing troughs with a late cycle: %v", g)
	}
}

package soak

import (
	"bytes"
	"compress/flate"
	"math/rand/v2"
	"testing"
	"time"
)

func TestStampedRoundTripsAndIsExactSize(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	at := time.Unix(1_900_000_000, 123456789)
	for _, size := range []int{64, 100, 1024, 4096} {
		p := stamped(rng, at, 987654, size)
		if len(p) != size {
			t.Fatalf("size %d: payload is %d bytes", size, len(p))
		}
		got, seq, ok := stampOf(p)
		if !ok || !got.Equal(at) || seq != 987654 {
			t.Fatalf("size %d: read back %v %d %v from %s", size, got, seq, ok, p)
		}
	}
	// Reformatted by a server (keys reordered, spaces): still read.
	if got, seq, ok := stampOf([]byte(`{"p": "x", "s": 7, "t": 42}`)); !ok || seq != 7 || got.UnixNano() != 42 {
		t.Fatalf("reformatted payload read as %v %d %v", got, seq, ok)
	}
	if _, _, ok := stampOf([]byte(`"just a string"`)); ok {
		t.Fatal("a foreign payload was read as stamped")
	}
}

// A segment of many messages must not compress: each is padded afresh.
func TestPushBodyIsIncompressible(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	body := pushBody(rng, "q", "p0", 0, 50, 1024, time.Now())
	var buf bytes.Buffer
	w, _ := flate.NewWriter(&buf, flate.BestSpeed)
	if _, err := w.Write(body); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// DEFLATE has an entropy coder, which LZ4 and pglz lack: 6 bits a
	// character is the most it can find. An LZ-only coder finds nothing.
	if ratio := float64(buf.Len()) / float64(len(body)); ratio < 0.7 {
		t.Fatalf("50 messages compress to %.0f%%: the padding repeats", 100*ratio)
	}
}

func TestLedgerCountsLossDuplicatesAndEarlyDeliveries(t *testing.T) {
	l := newLedger(2)
	first := l.take(4)  // 0..3
	l.receive(0, first) // before the push's answer
	l.pushedOK(first, 4)
	l.receive(0, first+1)
	l.receive(0, first+1) // duplicate
	l.receive(1, first)
	next := l.take(2) // 4..5: the push fails, yet 4 arrives
	l.receive(1, next)
	l.receive(0, 99) // never handed out
	d := l.account("q", []string{"a", "b"})
	if d.Pushed != 4 || d.Failed != 2 || d.Strangers != 1 {
		t.Fatalf("pushed %d failed %d strangers %d, want 4, 2, 1", d.Pushed, d.Failed, d.Strangers)
	}
	a, b := d.Groups[0], d.Groups[1]
	if a.Received != 2 || a.Lost != 2 || a.Dups != 1 || a.Unpushed != 0 {
		t.Errorf("group a: %+v, want received 2, lost 2, 1 duplicate", a)
	}
	if b.Received != 2 || b.Lost != 3 || b.Dups != 0 || b.Unpushed != 1 {
		t.Errorf("group b: %+v, want received 2 (one of a failed push), lost 3", b)
	}
	if l.missing(0) != 2 || l.missing(1) != 3 {
		t.Errorf("missing %d and %d, want 2 and 3", l.missing(0), l.missing(1))
	}
}

// samples makes a soak of n samples a minute apart where table "lethe.t"
// has size(minute).
func samples(n int, size func(m float64) float64) []Sample {
	var out []Sample
	for i := range n {
		m := float64(i)
		out = append(out, Sample{Elapsed: m * 60, DatabaseBytes: int64(size(m)) + 100<<20,
			Tables: []TableSample{{Name: "lethe.t", Total: int64(size(m))}, {Name: "lethe.flat", Total: 8 << 20}}})
	}
	return out
}

func TestWindowsAreMinutes10To20AgainstTheLast10(t *testing.T) {
	early, late, scaled := Windows(2 * time.Hour)
	if early != (Window{600, 1200}) || late != (Window{6600, 7200}) || scaled {
		t.Fatalf("windows of 2h: %v %v %v", early, late, scaled)
	}
	// A table growing 1 MiB a minute for two hours fails; one that
	// stopped at minute 5 passes.
	growing := Judge(2*time.Hour, samples(121, func(m float64) float64 { return m * (1 << 20) }), nil)
	if growing.Pass || !hasProblem(growing, "lethe.t") || !hasProblem(growing, "database") {
		t.Fatalf("a table growing a MiB a minute passed: %s", growing.Line())
	}
	steady := Judge(2*time.Hour, samples(121, func(m float64) float64 { return min(m, 5) * (20 << 20) }), nil)
	if !steady.Pass {
		t.Fatalf("a table flat since minute 5 failed: %s", steady.Line())
	}
	lost := Judge(2*time.Hour, samples(121, func(float64) float64 { return 1 << 20 }),
		[]Delivery{{Groups: []GroupDelivery{{Lost: 3}, {Dups: 1}}}})
	if lost.Pass || lost.Lost != 3 || lost.Dups != 1 {
		t.Fatalf("lost messages passed: %s", lost.Line())
	}
}

func hasProblem(v Verdict, prefix string) bool {
	for _, p := range v.Problems {
		if len(p) >= len(prefix) && p[:len(prefix)] == prefix {
			return true
		}
	}
	return false
}

func TestStillGrowingIgnoresStepsAndFindsClimbs(t *testing.T) {
	// 20 minutes; the second half is judged.
	climb := samples(21, func(m float64) float64 { return 10<<20 + m*(512<<10) })
	if g := StillGrowing(climb, 600, 0.2, 1<<20); len(g) != 1 || g[0].Table != "lethe.t" {
		t.Fatalf("a steady climb of 5 MiB over 10 minutes on ~15 MiB: %v", g)
	}
	// One extent added at minute 12 on a 40 MiB table: 2.5%, not a climb.
	step := samples(21, func(m float64) float64 {
		if m >= 12 {
			return 41 << 20
		}
		return 40 << 20
	})
	if g := StillGrowing(step, 600, 0.2, 1<<20); len(g) != 0 {
		t.Fatalf("one step was taken for growth: %v", g)
	}
	// A steady table that vacuum truncates now and then: the CI soak's
	// segments, 5 to 8.7 MiB, truncated at minute 11 and 14, refilled
	// and flat at their old high at the end. Its slope over the second
	// half tilts past 20% of the mean; its high-water mark does not move.
	saw := []float64{8.6, 8.6, 8.6, 8.6, 8.6, 8.6, 8.6, 8.6, 8.6, 8.6, 8.6, 5.2, 7.0, 8.0, 5.2, 6.6, 7.3, 8.7, 8.7, 8.7, 8.7}
	if g := StillGrowing(samples(21, func(m float64) float64 { return saw[int(m)] * (1 << 20) }), 600, 0.2, 1<<20); len(g) != 0 {
		t.Fatalf("a vacuum sawtooth was taken for growth: %v", g)
	}
	if g := StillGrowing(climb, 600, 0.2, 1<<20, "lethe.t"); len(g) != 0 {
		t.Fatalf("a skipped table was judged: %v", g)
	}
}

func TestSlopeIsLeastSquares(t *testing.T) {
	if got := leastSquares([]float64{0, 1, 2, 3}, []float64{1, 3, 5, 7}); got != 2 {
		t.Fatalf("slope %v, want 2", got)
	}
	if got := leastSquares([]float64{5}, []float64{1}); got != 0 {
		t.Fatalf("one point: slope %v, want 0", got)
	}
}

// An audit table that grows linearly (its rows are kept
// METRICS_RETENTION_DAYS) passes by its rate; one whose rate climbs as the
// soak goes on fails, as does any other table growing the same way.
func TestJudgeTakesAuditTablesByRate(t *testing.T) {
	withTable := func(name string, size func(m float64) float64) []Sample {
		s := samples(121, func(float64) float64 { return 1 << 20 })
		for i := range s {
			s[i].Tables = append(s[i].Tables, TableSample{Name: name, Total: int64(size(float64(i)))})
		}
		return s
	}
	linear := func(m float64) float64 { return m * (30 << 10) } // 30 KiB a minute: 3.5 MiB over 2 h
	if v := Judge(2*time.Hour, withTable("lethe.retention_history", linear), nil); !v.Pass {
		t.Fatalf("an audit table growing 30 KiB a minute, steadily, failed: %s", v.Line())
	}
	if v := Judge(2*time.Hour, withTable("lethe.cursors", linear), nil); v.Pass || !hasProblem(v, "lethe.cursors") {
		t.Fatalf("a table that is not an audit table passed by its rate: %s", v.Line())
	}
	climbing := func(m float64) float64 { return m * m * (1 << 10) } // 2 KiB/min at minute 1, 240 at minute 120
	if v := Judge(2*time.Hour, withTable("lethe.retention_history", climbing), nil); v.Pass || !hasProblem(v, "lethe.retention_history") {
		t.Fatalf("an audit table whose rate climbs passed: %s", v.Line())
	}
}

// A table still filling in minutes 10–20 (a window longer than 10 minutes)
// that is steady over the second half is flat, said so; one that keeps
// growing there is not.
func TestJudgeTakesALateFillByTheSecondHalf(t *testing.T) {
	filling := func(m float64) float64 { return min(m, 25) * (2 << 20) } // steady from minute 25
	v := Judge(2*time.Hour, samples(121, filling), nil)
	var got Change
	for _, c := range v.Tables {
		if c.Name == "lethe.t" {
			got = c
		}
	}
	if !got.Flat || !got.Steady {
		t.Fatalf("a table steady from minute 25 was judged %+v: want flat, by its second half", got)
	}
	climbing := func(m float64) float64 { return 40<<20 + m*(200<<10) } // +200 KiB a minute, all along
	if v := Judge(2*time.Hour, samples(121, climbing), nil); v.Pass || !hasProblem(v, "lethe.t") {
		t.Fatalf("a table growing all along passed: %s", v.Line())
	}
}

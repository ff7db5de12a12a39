package soak

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Tolerances of the verdict.
const (
	// DatabaseTolerance: the database's size in the late window within
	// ±10% of the early window's.
	DatabaseTolerance = 0.10
	// TableTolerance and TableFloor: a table is flat when its late mean is
	// within ±10% of its early mean, or within 1 MiB (a small table grows
	// by whole pages and extents; a megabyte of it matters to nobody).
	TableTolerance = 0.10
	TableFloor     = 1 << 20
	// RSSTolerance and RSSFloor: lethe's resident memory within ±10% or
	// 4 MiB (the Go runtime's heap goal moves by a few MiB under GC).
	RSSTolerance = 0.10
	RSSFloor     = 4 << 20
	// AuditRateTolerance and AuditRateFloor: an audit table keeps its rows
	// METRICS_RETENTION_DAYS by design, so over a soak of hours it grows;
	// it passes when it grows linearly, its late slope within +25% or
	// 20 KiB a minute of its early slope (one row per decision, not more
	// per minute as the soak goes on).
	AuditRateTolerance = 0.25
	AuditRateFloor     = 20 << 10
	// AuditDays is METRICS_RETENTION_DAYS's default, for the projection.
	AuditDays = 90
)

// AuditTables are lethe's audit tables: rows kept METRICS_RETENTION_DAYS,
// then purged a day at a time, so they are flat only after that many days.
var AuditTables = []string{"lethe.retention_history", "lethe.retention_losses", "lethe.retention_runs", "lethe.reclaim_history"}

// Window is a span of the soak, in seconds since the load started.
type Window struct {
	From float64 `json:"from_s"`
	To   float64 `json:"to_s"`
}

func (w Window) String() string {
	return fmt.Sprintf("minutes %s–%s", minutes(w.From), minutes(w.To))
}

func minutes(s float64) string {
	m := s / 60
	if m == float64(int(m)) {
		return fmt.Sprintf("%d", int(m))
	}
	return fmt.Sprintf("%.1f", m)
}

// Windows are minutes 10–20 against the last 10 minutes. A
// soak shorter than 30 minutes compares its middle third with its last.
func Windows(d time.Duration) (early, late Window, scaled bool) {
	s := d.Seconds()
	if d >= 30*time.Minute {
		return Window{600, 1200}, Window{s - 600, s}, false
	}
	return Window{s / 3, 2 * s / 3}, Window{2 * s / 3, s}, true
}

// Change is one figure compared between the two windows.
type Change struct {
	Name  string  `json:"name"`
	Early float64 `json:"early"`
	Late  float64 `json:"late"`
	// SlopePerMin is the least-squares growth over the late window, per
	// minute, in the figure's unit.
	SlopePerMin float64 `json:"slope_per_min"`
	// EarlySlopePerMin is the same over the early window; set for audit
	// tables, which are judged by their rate (AuditTables).
	EarlySlopePerMin float64 `json:"early_slope_per_min,omitempty"`
	Audit            bool    `json:"audit,omitempty"`
	// Steady says the figure was judged flat by its second half: it moved
	// more than the tolerance between the windows (it was still filling,
	// or fell), but did not grow over the soak's second half.
	Steady bool `json:"steady_second_half,omitempty"`
	Flat   bool `json:"flat"`
}

// Verdict is the soak's conclusion.
type Verdict struct {
	Early, Late Window
	Scaled      bool     `json:"windows_scaled"` // shorter than 30 minutes
	Database    Change   `json:"database"`
	RSS         *Change  `json:"rss,omitempty"` // nil: not measured
	Tables      []Change `json:"tables"`
	Lost        int64    `json:"lost"`
	Dups        int64    `json:"duplicates"`
	Pass        bool     `json:"pass"`
	Problems    []string `json:"problems,omitempty"`
}

// Judge compares the windows of the samples.
func Judge(d time.Duration, samples []Sample, deliveries []Delivery) Verdict {
	v := Verdict{}
	v.Early, v.Late, v.Scaled = Windows(d)
	if len(samples) == 0 {
		v.Problems = []string{"no samples"}
		return v
	}
	v.Database = compare("database", samples, v.Early, v.Late, func(s Sample) (float64, bool) {
		return float64(s.DatabaseBytes), true
	})
	v.Database.Flat = within(v.Database, DatabaseTolerance, 0)
	second := Window{From: v.Late.To / 2, To: v.Late.To}
	if samples[len(samples)-1].RSSBytes > 0 {
		get := func(s Sample) (float64, bool) { return float64(s.RSSBytes), s.RSSBytes > 0 }
		c := compare("lethe RSS", samples, v.Early, v.Late, get)
		c.Flat = within(c, RSSTolerance, RSSFloor)
		if !c.Flat {
			_, growing := growsOver(samples, second, get, RSSTolerance, RSSFloor)
			c.Flat, c.Steady = !growing, !growing
		}
		v.RSS = &c
	}
	for _, name := range tableNames(samples) {
		c := compare(name, samples, v.Early, v.Late, func(s Sample) (float64, bool) {
			t, ok := s.Table(name)
			return float64(t.Total), ok
		})
		c.Flat = within(c, TableTolerance, TableFloor)
		if !c.Flat && !slices.Contains(AuditTables, name) {
			_, growing := growsOver(samples, second, func(s Sample) (float64, bool) {
				t, ok := s.Table(name)
				return float64(t.Total), ok
			}, TableTolerance, TableFloor)
			c.Flat, c.Steady = !growing, !growing
		}
		if slices.Contains(AuditTables, name) {
			c.Audit = true
			c.EarlySlopePerMin = Slope(samples, v.Early, func(s Sample) (float64, bool) {
				t, ok := s.Table(name)
				return float64(t.Total), ok
			}) * 60
			c.Flat = c.Flat || c.SlopePerMin <= max(c.EarlySlopePerMin*(1+AuditRateTolerance), c.EarlySlopePerMin+AuditRateFloor)
		}
		v.Tables = append(v.Tables, c)
	}
	for _, d := range deliveries {
		for _, g := range d.Groups {
			v.Lost += g.Lost
			v.Dups += g.Dups
		}
	}
	v.Problems = v.problems()
	for _, w := range []Window{v.Early, v.Late} {
		if _, n := mean(samples, w, func(Sample) (float64, bool) { return 0, true }); n == 0 {
			v.Problems = append(v.Problems, "no sample in "+w.String())
		}
	}
	v.Pass = len(v.Problems) == 0
	return v
}

func (v Verdict) problems() []string {
	var out []string
	if !v.Database.Flat {
		out = append(out, "database "+pct(v.Database))
	}
	for _, t := range v.Tables {
		if !t.Flat {
			out = append(out, t.Name+" "+pct(t))
		}
	}
	if v.RSS != nil && !v.RSS.Flat {
		out = append(out, "lethe RSS "+pct(*v.RSS))
	}
	if v.Lost > 0 {
		out = append(out, fmt.Sprintf("%d messages lost", v.Lost))
	}
	if v.Dups > 0 {
		out = append(out, fmt.Sprintf("%d duplicate deliveries", v.Dups))
	}
	return out
}

// Line is the verdict in one line.
func (v Verdict) Line() string {
	state := "PASS"
	if !v.Pass {
		state = "FAIL"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "verdict %s (%s vs %s", state, v.Late, v.Early)
	if v.Scaled {
		b.WriteString(", windows scaled to a soak under 30 minutes")
	}
	fmt.Fprintf(&b, "): database %s; ", pct(v.Database))
	growing := 0
	for _, t := range v.Tables {
		if !t.Flat {
			growing++
		}
	}
	if growing == 0 {
		fmt.Fprintf(&b, "all %d tables flat", len(v.Tables))
	} else {
		fmt.Fprintf(&b, "%d of %d tables not flat", growing, len(v.Tables))
	}
	if v.RSS != nil {
		fmt.Fprintf(&b, "; RSS %s", pct(*v.RSS))
	}
	fmt.Fprintf(&b, "; %d lost, %d duplicates", v.Lost, v.Dups)
	if len(v.Problems) > 0 {
		fmt.Fprintf(&b, " [%s]", strings.Join(v.Problems, "; "))
	}
	return b.String()
}

func pct(c Change) string {
	if c.Early == 0 {
		return fmt.Sprintf("%s → %s", mib(c.Early), mib(c.Late))
	}
	return fmt.Sprintf("%s → %s (%+.1f%%)", mib(c.Early), mib(c.Late), 100*(c.Late/c.Early-1))
}

func mib(b float64) string { return fmt.Sprintf("%.1f MiB", b/(1<<20)) }

func within(c Change, rel, floor float64) bool {
	diff := c.Late - c.Early
	if diff < 0 {
		diff = -diff
	}
	return diff <= max(rel*c.Early, floor)
}

// compare means a figure over each window and fits its late slope.
func compare(name string, samples []Sample, early, late Window, get func(Sample) (float64, bool)) Change {
	c := Change{Name: name}
	c.Early, _ = mean(samples, early, get)
	c.Late, _ = mean(samples, late, get)
	c.SlopePerMin = Slope(samples, late, get) * 60
	return c
}

func inWindow(s Sample, w Window) bool { return s.Elapsed >= w.From-1 && s.Elapsed <= w.To+1 }

func mean(samples []Sample, w Window, get func(Sample) (float64, bool)) (float64, int) {
	sum, n := 0.0, 0
	for _, s := range samples {
		if v, ok := get(s); ok && inWindow(s, w) {
			sum += v
			n++
		}
	}
	if n == 0 {
		return 0, 0
	}
	return sum / float64(n), n
}

// Slope is the least-squares growth of a figure per second over the
// samples of w (0 with fewer than two).
func Slope(samples []Sample, w Window, get func(Sample) (float64, bool)) float64 {
	var xs, ys []float64
	for _, s := range samples {
		if v, ok := get(s); ok && inWindow(s, w) {
			xs, ys = append(xs, s.Elapsed), append(ys, v)
		}
	}
	return leastSquares(xs, ys)
}

func leastSquares(xs, ys []float64) float64 {
	n := float64(len(xs))
	if n < 2 {
		return 0
	}
	var sx, sy, sxx, sxy float64
	for i := range xs {
		sx, sy = sx+xs[i], sy+ys[i]
		sxx, sxy = sxx+xs[i]*xs[i], sxy+xs[i]*ys[i]
	}
	den := n*sxx - sx*sx
	if den == 0 {
		return 0
	}
	return (n*sxy - sx*sy) / den
}

// tableNames are the tables any sample saw, in the last sample's order.
func tableNames(samples []Sample) []string {
	var out []string
	for i := len(samples) - 1; i >= 0; i-- {
		for _, t := range samples[i].Tables {
			if !slices.Contains(out, t.Name) {
				out = append(out, t.Name)
			}
		}
	}
	return out
}

func kib(b float64) string { return fmt.Sprintf("%.0f KiB", b/(1<<10)) }

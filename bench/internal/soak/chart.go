package soak

import (
	"errors"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// footprintLine is one line of the footprint chart.
type footprintLine struct {
	name  string
	color color.RGBA
	dash  []vg.Length
	get   func(Sample) (float64, bool)
}

// chartTables are drawn one line each; the other lethe tables are summed.
var chartTables = []struct {
	name  string
	color color.RGBA
}{
	{"lethe.segments", color.RGBA{R: 200, A: 255}},
	{"lethe.txns", color.RGBA{R: 230, G: 120, A: 255}},
	{"lethe.retention_history", color.RGBA{R: 150, G: 60, B: 150, A: 255}},
	{"lethe.retention_runs", color.RGBA{R: 90, G: 160, B: 220, A: 255}},
	{"lethe.cursors", color.RGBA{G: 140, A: 255}},
}

func footprintLines() []footprintLine {
	lines := []footprintLine{
		{"database", color.RGBA{A: 255}, nil, func(s Sample) (float64, bool) { return float64(s.DatabaseBytes), true }},
		{"WAL on disk", color.RGBA{R: 120, G: 120, B: 120, A: 255}, []vg.Length{vg.Points(4), vg.Points(3)},
			func(s Sample) (float64, bool) { return float64(s.WALBytes), s.WALError == "" }},
	}
	for _, t := range chartTables {
		name := t.name
		lines = append(lines, footprintLine{name + " (all forks)", t.color, nil, func(s Sample) (float64, bool) {
			tb, ok := s.Table(name)
			return float64(tb.Total), ok
		}})
	}
	lines = append(lines,
		footprintLine{"other lethe tables", color.RGBA{R: 160, G: 160, A: 255}, nil, otherTables},
		footprintLine{"lethe RSS", color.RGBA{B: 200, A: 255}, []vg.Length{vg.Points(2), vg.Points(2)},
			func(s Sample) (float64, bool) { return float64(s.RSSBytes), s.RSSBytes > 0 }},
	)
	return lines
}

func otherTables(s Sample) (float64, bool) {
	var sum int64
next:
	for _, t := range s.Tables {
		for _, c := range chartTables {
			if c.name == t.Name {
				continue next
			}
		}
		sum += t.Total
	}
	return float64(sum), true
}

// Chart draws the footprint over time, in MiB against minutes, with the
// verdict's two windows marked.
func Chart(path string, samples []Sample, v Verdict) error {
	if len(samples) < 2 {
		return errors.New("soak chart: fewer than two samples")
	}
	p := plot.New()
	p.Title.Text = "lethe footprint under a constant load"
	p.X.Label.Text = "minutes since the load started"
	p.Y.Label.Text = "MiB"
	p.Legend.Top, p.Legend.Left = true, true
	top := 0.0
	for _, l := range footprintLines() {
		var pts plotter.XYs
		for _, s := range samples {
			if y, ok := l.get(s); ok {
				pts = append(pts, plotter.XY{X: s.Elapsed / 60, Y: y / (1 << 20)})
				top = max(top, y/(1<<20))
			}
		}
		if len(pts) == 0 {
			continue
		}
		line, err := plotter.NewLine(pts)
		if err != nil {
			return err
		}
		line.Color, line.Dashes, line.Width = l.color, l.dash, vg.Points(1.5)
		p.Add(line)
		p.Legend.Add(l.name, line)
	}
	for _, w := range []Window{v.Early, v.Late} {
		for _, x := range []float64{w.From / 60, w.To / 60} {
			mark, err := plotter.NewLine(plotter.XYs{{X: x, Y: 0}, {X: x, Y: top * 1.6}})
			if err != nil {
				return err
			}
			mark.Color, mark.Dashes = color.RGBA{R: 180, G: 180, B: 180, A: 255}, []vg.Length{vg.Points(1), vg.Points(3)}
			p.Add(mark)
		}
	}
	p.Y.Min, p.Y.Max = 0, top*1.6 // room for the legend above the lines
	return p.Save(10*vg.Inch, 6*vg.Inch, path)
}

package soak

import (
	"errors"
	"image/color"
	"os"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
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

// serverLines are the top panel: what the database, its WAL and lethe's
// process occupy.
func serverLines() []footprintLine {
	return []footprintLine{
		{"database", color.RGBA{A: 255}, nil, func(s Sample) (float64, bool) { return float64(s.DatabaseBytes), true }},
		{"WAL on disk", color.RGBA{R: 120, G: 120, B: 120, A: 255}, []vg.Length{vg.Points(4), vg.Points(3)},
			func(s Sample) (float64, bool) { return float64(s.WALBytes), s.WALError == "" }},
		{"lethe RSS", color.RGBA{B: 200, A: 255}, []vg.Length{vg.Points(2), vg.Points(2)},
			func(s Sample) (float64, bool) { return float64(s.RSSBytes), s.RSSBytes > 0 }},
	}
}

// tableLines are the bottom panel: lethe's tables, every fork.
func tableLines() []footprintLine {
	var lines []footprintLine
	for _, t := range chartTables {
		name := t.name
		lines = append(lines, footprintLine{name, t.color, nil, func(s Sample) (float64, bool) {
			tb, ok := s.Table(name)
			return float64(tb.Total), ok
		}})
	}
	return append(lines, footprintLine{"other lethe tables", color.RGBA{R: 160, G: 160, A: 255}, nil, otherTables})
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

// Chart draws the footprint over time in two panels, MiB against
// minutes: the database, the WAL and lethe's memory above, lethe's tables
// (heap, TOAST and indexes) below on a scale of their own, with the
// verdict's two windows marked.
func Chart(path string, samples []Sample, v Verdict) error {
	if len(samples) < 2 {
		return errors.New("soak chart: fewer than two samples")
	}
	top, err := panel("lethe footprint under a constant load: database, WAL and memory", samples, v, serverLines())
	if err != nil {
		return err
	}
	bottom, err := panel("lethe's tables (heap, TOAST and indexes)", samples, v, tableLines())
	if err != nil {
		return err
	}
	img := vgimg.New(10*vg.Inch, 10*vg.Inch)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadX: vg.Millimeter, PadY: 4 * vg.Millimeter,
		PadTop: 2 * vg.Millimeter, PadBottom: 2 * vg.Millimeter, PadLeft: 2 * vg.Millimeter, PadRight: 4 * vg.Millimeter}
	canvases := plot.Align([][]*plot.Plot{{top}, {bottom}}, tiles, dc)
	top.Draw(canvases[0][0])
	bottom.Draw(canvases[1][0])
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// panel is one plot of the chart.
func panel(title string, samples []Sample, v Verdict, lines []footprintLine) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "minutes since the load started"
	p.Y.Label.Text = "MiB"
	p.Legend.Top, p.Legend.Left = true, true
	top := 0.0
	for _, l := range lines {
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
			return nil, err
		}
		line.Color, line.Dashes, line.Width = l.color, l.dash, vg.Points(1.5)
		p.Add(line)
		p.Legend.Add(l.name, line)
	}
	top = max(top, 1) * 1.6 // room for the legend above the lines
	for _, w := range []Window{v.Early, v.Late} {
		for _, x := range []float64{w.From / 60, w.To / 60} {
			mark, err := plotter.NewLine(plotter.XYs{{X: x, Y: 0}, {X: x, Y: top}})
			if err != nil {
				return nil, err
			}
			mark.Color, mark.Dashes = color.RGBA{R: 180, G: 180, B: 180, A: 255}, []vg.Length{vg.Points(1), vg.Points(3)}
			p.Add(mark)
		}
	}
	p.Y.Min, p.Y.Max = 0, top
	return p, nil
}

package report

import (
	"errors"
	"fmt"
	"image/color"
	"maps"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/lethe-mq/lethe/bench/internal/meter"
	"github.com/lethe-mq/lethe/bench/internal/payload"
	"github.com/lethe-mq/lethe/bench/internal/result"
)

// series is one line of the throughput chart: a figure per batch size.
type series struct {
	name  string
	keyOf func(batch int) string
	color color.RGBA
	dash  []vg.Length
}

func (s series) value(results []result.Result, batch int) (float64, bool) {
	key := s.keyOf(batch)
	for _, r := range results {
		if r.Key == key && r.Skipped == "" && r.Value > 0 {
			return r.Value, true
		}
	}
	return 0, false
}

// chartSeries is one lethe line per partition count measured, then the
// ceiling and the peers.
func chartSeries(results []result.Result, size int) []series {
	var parts []int
	for _, r := range results {
		if r.System == result.Lethe && r.Scenario == "push" && r.Payload == size && !slices.Contains(parts, r.Partitions) {
			parts = append(parts, r.Partitions)
		}
	}
	slices.Sort(parts)
	shades := []color.RGBA{{R: 200, A: 255}, {R: 230, G: 120, A: 255}, {R: 150, G: 60, B: 150, A: 255}, {R: 120, G: 120, B: 120, A: 255}}
	var out []series
	for i, p := range parts {
		name := fmt.Sprintf("lethe, %s partitions", meter.Group(int64(p)))
		if p == 1 {
			name = "lethe, 1 partition"
		}
		out = append(out, series{name, func(b int) string { return fmt.Sprintf("lethe/push/b%d/p%d/%d", b, p, size) }, shades[i%len(shades)], nil})
	}
	return append(out,
		series{"raw PostgreSQL ceiling", func(b int) string {
			if b == 1 {
				return fmt.Sprintf("ceiling/insert/%d", size)
			}
			return fmt.Sprintf("ceiling/segment-ingest/%d", size)
		}, color.RGBA{A: 255}, []vg.Length{vg.Points(4), vg.Points(3)}},
		series{"River", func(b int) string { return fmt.Sprintf("river/push/b%d/%d", b, size) }, color.RGBA{G: 140, A: 255}, nil},
		series{"NATS JetStream", func(b int) string { return fmt.Sprintf("nats/push/b%d/%d", b, size) }, color.RGBA{B: 200, A: 255}, nil},
	)
}

// ErrNothingToDraw is Chart's answer when the run measured no push (a run of
// -scenarios without push): there is no chart, which is not a failure.
var ErrNothingToDraw = errors.New("no push figures to draw")

// Chart draws push throughput against batch size, both axes logarithmic,
// one line per system.
func Chart(path string, results []result.Result, size int) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Push throughput by batch size, %s payloads", payload.Label(size))
	p.X.Label.Text = "messages per request (batch)"
	p.Y.Label.Text = "messages per second"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker = plot.ConstantTicks([]plot.Tick{{Value: 1, Label: "1"}, {Value: 10, Label: "10"}, {Value: 100, Label: "100"}})
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Legend.Top, p.Legend.Left = true, true
	lo, hi := 0.0, 0.0
	for _, s := range chartSeries(results, size) {
		var pts plotter.XYs
		for _, b := range []int{1, 10, 100} {
			if v, ok := s.value(results, b); ok {
				pts = append(pts, plotter.XY{X: float64(b), Y: v})
				if lo == 0 || v < lo {
					lo = v
				}
				hi = max(hi, v)
			}
		}
		if len(pts) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(pts)
		if err != nil {
			return err
		}
		line.Color, line.Dashes, line.Width = s.color, s.dash, vg.Points(1.5)
		points.Color, points.Shape = s.color, draw.CircleGlyph{}
		p.Add(line, points)
		p.Legend.Add(s.name, line, points)
	}
	if hi == 0 {
		return ErrNothingToDraw
	}
	p.X.Min, p.X.Max = 0.8, 130
	p.Y.Min, p.Y.Max = lo/2, hi*4 // room for the legend above the lines
	return p.Save(8*vg.Inch, 5*vg.Inch, path)
}

func sortedKeys(m map[string]string) []string {
	return slices.Sorted(maps.Keys(m))
}

package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/lethe-mq/lethe/bench/internal/meter"
	"github.com/lethe-mq/lethe/bench/internal/payload"
	"github.com/lethe-mq/lethe/bench/internal/result"
)

// Write puts results.json, results.md and one chart per payload size in
// dir, and returns the paths written.
func Write(dir string, meta Meta, results []result.Result, sizes []int) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var written []string
	js, err := json.MarshalIndent(map[string]any{"meta": meta, "results": results}, "", "  ")
	if err != nil {
		return nil, err
	}
	p := filepath.Join(dir, "results.json")
	if err := os.WriteFile(p, append(js, '\n'), 0o644); err != nil {
		return nil, err
	}
	written = append(written, p)
	var charts []string
	for _, size := range sizes {
		name := fmt.Sprintf("throughput-%s.png", strings.ReplaceAll(payload.Label(size), " ", ""))
		err := Chart(filepath.Join(dir, name), results, size)
		if errors.Is(err, ErrNothingToDraw) {
			continue
		}
		if err != nil {
			return written, fmt.Errorf("chart for %s: %w", payload.Label(size), err)
		}
		charts = append(charts, name)
		written = append(written, filepath.Join(dir, name))
	}
	p = filepath.Join(dir, "results.md")
	if err := os.WriteFile(p, []byte(Markdown(meta, results, sizes, charts)), 0o644); err != nil {
		return written, err
	}
	return append(written, p), nil
}

// Markdown renders the tables: per payload size every figure with its
// spread and ratio, then push throughput by batch size side by side.
func Markdown(meta Meta, results []result.Result, sizes []int, charts []string) string {
	var b strings.Builder
	title := "lethe benchmark results"
	if meta.Mode == "quick" {
		title += " (quick smoke run, not a measurement)"
	}
	fmt.Fprintf(&b, "# %s\n\n", title)
	fmt.Fprintf(&b, "- started: %s, took %.0f s, mode: %s\n", meta.Started, meta.Seconds, meta.Mode)
	fmt.Fprintf(&b, "- command: `%s`\n", meta.Command)
	fmt.Fprintf(&b, "- machine: %s\n", meta.Machine)
	for _, k := range sortedKeys(meta.Versions) {
		fmt.Fprintf(&b, "- %s: %s\n", k, meta.Versions[k])
	}
	fmt.Fprintf(&b, "- lethe memory: %s\n", meta.LetheMemory)
	for _, n := range meta.Notes {
		fmt.Fprintf(&b, "- %s\n", n)
	}
	b.WriteString("\nRatio: a throughput divided by its ceiling's (1.00 = as fast as raw PostgreSQL), a duration's inverse likewise (the ceiling's seconds over lethe's); for latency, p99 divided by the ceiling's p99. Spread: the lowest and highest one-second rate of the window.\n")
	b.WriteString(Summary(results, sizes))
	for _, size := range sizes {
		fmt.Fprintf(&b, "\n## Details, %s payloads\n\n", payload.Label(size))
		b.WriteString("| system | scenario | figure | spread (1 s min–max) | ratio to ceiling | lethe peak RSS | notes |\n")
		b.WriteString("|---|---|---|---|---|---|---|\n")
		for _, r := range results {
			if r.Payload != size {
				continue
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n",
				r.System, r.Label, figure(r), spread(r), ratio(r, results), rss(r), notes(r))
		}
	}
	b.WriteString("\n## Push throughput by batch size (msg/s)\n")
	for _, size := range sizes {
		cols := chartSeries(results, size)
		fmt.Fprintf(&b, "\n| %s | batch |", payload.Label(size))
		for _, s := range cols {
			fmt.Fprintf(&b, " %s |", s.name)
		}
		b.WriteString("\n|---|---|" + strings.Repeat("---|", len(cols)) + "\n")
		for _, batch := range []int{1, 10, 100} {
			fmt.Fprintf(&b, "| | %d |", batch)
			for _, s := range cols {
				if v, ok := s.value(results, batch); ok {
					fmt.Fprintf(&b, " %s |", meter.Group(int64(v)))
				} else {
					b.WriteString(" – |")
				}
			}
			b.WriteString("\n")
		}
	}
	b.WriteString("\nThe ceiling for batch 1 is one INSERT per message from 64 connections; for batches of 10 and 100 it is segment rows of 100 frames from 8 connections.\n")
	for _, c := range charts {
		fmt.Fprintf(&b, "\n![%s](%s)\n", c, c)
	}
	b.WriteString(Profiles(results))
	return b.String()
}

// Summary is one row per scenario with every payload size side by side:
// the table BENCHMARKS.md's results of record are read from.
func Summary(results []result.Result, sizes []int) string {
	var b strings.Builder
	b.WriteString("\n## Summary\n\n| system | scenario |")
	for _, size := range sizes {
		fmt.Fprintf(&b, " %s | ratio |", payload.Label(size))
	}
	b.WriteString("\n|---|---|" + strings.Repeat("---|---|", len(sizes)) + "\n")
	var order []string
	rows := map[string]map[int]result.Result{}
	for _, r := range results {
		k := strings.TrimSuffix(r.Key, fmt.Sprintf("/%d", r.Payload))
		if rows[k] == nil {
			rows[k] = map[int]result.Result{}
			order = append(order, k)
		}
		rows[k][r.Payload] = r
	}
	for _, k := range order {
		var first result.Result
		for _, size := range sizes {
			if r, ok := rows[k][size]; ok {
				first = r
				break
			}
		}
		fmt.Fprintf(&b, "| %s | %s |", first.System, first.Label)
		for _, size := range sizes {
			r, ok := rows[k][size]
			if !ok {
				b.WriteString(" – | – |")
				continue
			}
			fmt.Fprintf(&b, " %s | %s |", figure(r), ratio(r, results))
		}
		b.WriteString("\n")
	}
	return b.String()
}

func figure(r result.Result) string {
	if r.Skipped != "" {
		return "skipped: " + r.Skipped
	}
	if r.Unit == "ms" && r.Latency != nil {
		return fmt.Sprintf("p50 %.2f ms, p99 %.2f ms (n=%s)", r.Latency.P50, r.Latency.P99, meter.Group(int64(r.Latency.Count)))
	}
	f := fmt.Sprintf("%s %s", meter.Group(int64(r.Value)), r.Unit)
	if r.Unit == "s" {
		f = fmt.Sprintf("%.3f s", r.Value)
	}
	if r.Errors > 0 {
		f += fmt.Sprintf(" (%d errors: %s)", r.Errors, truncate(r.FirstError, 120))
	}
	return f
}

func spread(r result.Result) string {
	if r.SpreadMax == 0 {
		return "–"
	}
	return fmt.Sprintf("%s–%s", meter.Group(int64(r.SpreadMin)), meter.Group(int64(r.SpreadMax)))
}

func ratio(r result.Result, all []result.Result) string {
	if r.System == result.Ceiling {
		return "(ceiling)"
	}
	if r.Ratio == 0 {
		return "–"
	}
	against := r.Ceiling
	for _, c := range all {
		if c.Key == r.Ceiling {
			against = shortCeiling(c.Scenario)
		}
	}
	if r.Unit == "ms" {
		return fmt.Sprintf("p99 ×%.1f of %s", r.Ratio, against)
	}
	return fmt.Sprintf("%.2f of %s", r.Ratio, against)
}

func shortCeiling(scenario string) string {
	switch scenario {
	case "segment-ingest":
		return "segment ingest"
	case "insert":
		return "INSERT per message"
	case "segment-read":
		return "segment read"
	case "insert-latency":
		return "INSERT latency"
	case "segment-delete":
		return "segment delete"
	case "table-drop":
		return "raw drop"
	case "segment-move":
		return "raw move"
	}
	return scenario
}

func rss(r result.Result) string {
	if r.PeakRSSMiB == 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f MiB", r.PeakRSSMiB)
}

func notes(r result.Result) string {
	n := r.Notes
	if r.Baseline != nil && r.Latency != nil && n == "" {
		n = fmt.Sprintf("push p99 %.1f ms during vs %.1f ms without", r.Latency.P99, r.Baseline.P99)
	}
	return strings.ReplaceAll(n, "|", "/")
}

func truncate(s string, n int) string {
	s = strings.ReplaceAll(s, "|", "/")
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

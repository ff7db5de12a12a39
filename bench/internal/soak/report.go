package soak

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/lethe-mq/lethe/bench/internal/report"
)

// Output file names in the output folder.
const (
	JSONFile  = "soak.json"
	MDFile    = "soak.md"
	ChartFile = "soak-footprint.png"
)

// Report is everything a soak produced.
type Report struct {
	Meta       report.Meta  `json:"meta"`
	Load       string       `json:"load"` // the spec in words
	Samples    []Sample     `json:"samples"`
	Deliveries []Delivery   `json:"deliveries"`
	Errors     []ErrorTally `json:"errors"`
	// Undelivered is what the drain still missed when it gave up.
	Undelivered int64   `json:"undelivered_at_end"`
	Verdict     Verdict `json:"verdict"`
}

// ErrorTally counts one kind of failed request.
type ErrorTally struct {
	Kind  string `json:"kind"`
	Count int64  `json:"count"`
	First string `json:"first,omitempty"`
}

// Write puts soak.json, soak.md and the chart in dir and returns their
// paths.
func (r *Report) Write(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var written []string
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	p := filepath.Join(dir, JSONFile)
	if err := os.WriteFile(p, append(js, '\n'), 0o644); err != nil {
		return nil, err
	}
	written = append(written, p)
	chart := filepath.Join(dir, ChartFile)
	chartErr := Chart(chart, r.Samples, r.Verdict)
	if chartErr == nil {
		written = append(written, chart)
	}
	p = filepath.Join(dir, MDFile)
	if err := os.WriteFile(p, []byte(r.Markdown(chartErr == nil)), 0o644); err != nil {
		return written, err
	}
	return append(written, p), chartErr
}

// Markdown renders the report.
func (r *Report) Markdown(withChart bool) string {
	var b strings.Builder
	m := r.Meta
	fmt.Fprintf(&b, "# lethe soak\n\n")
	fmt.Fprintf(&b, "- started: %s, took %.0f s\n- command: `%s`\n- machine: %s\n", m.Started, m.Seconds, m.Command, m.Machine)
	for _, k := range sortedKeys(m.Versions) {
		fmt.Fprintf(&b, "- %s: %s\n", k, m.Versions[k])
	}
	fmt.Fprintf(&b, "- lethe memory: %s\n- load: %s\n", m.LetheMemory, r.Load)
	for _, n := range m.Notes {
		fmt.Fprintf(&b, "- %s\n", n)
	}
	fmt.Fprintf(&b, "\n## Verdict\n\n%s\n\n", r.Verdict.Line())
	r.verdictTable(&b)
	r.deliveryTable(&b)
	b.WriteString("\n## Footprint over time\n\n")
	if withChart {
		fmt.Fprintf(&b, "![footprint](%s)\n\n", ChartFile)
	}
	r.timeTable(&b)
	if len(r.Samples) > 0 {
		r.tableDetail(&b, r.Samples[len(r.Samples)-1])
	}
	return b.String()
}

func (r *Report) verdictTable(b *strings.Builder) {
	v := r.Verdict
	fmt.Fprintf(b, "Tolerances: database ±%.0f%%; each table ±%.0f%% or %s, whichever is larger; RSS ±%.0f%% or %s; 0 lost; 0 duplicates. Slope: least-squares growth per minute over the late window. The audit tables (%s) keep their rows METRICS_RETENTION_DAYS by design, so they grow for that long: one is judged flat by size as above or by rate, when its late slope is within +%.0f%% or %s a minute of its early slope (linear growth, not more rows a minute as the soak goes on); the projection is its late slope over a day and over %d days. A table, or the RSS, that moved more than its tolerance between the windows is still flat when it did not grow over the soak's second half (least-squares growth within its tolerance, a high-water mark that did not rise by half that, or neither its peaks nor its troughs rising through each third of that half by a sixth of it: one late retention cycle is not growth): it reached its steady state after minute 10 (the sidecar keeps 15 minutes of hashes plus a 5-minute partition) or fell.\n\n",
		100*DatabaseTolerance, 100*TableTolerance, mib(TableFloor), 100*RSSTolerance, mib(RSSFloor),
		strings.Join(AuditTables, ", "), 100*AuditRateTolerance, kib(AuditRateFloor), AuditDays)
	fmt.Fprintf(b, "| figure | %s | %s | change | late slope / min | flat |\n|---|---|---|---|---|---|\n", v.Early, v.Late)
	rows := append([]Change{v.Database}, v.Tables...)
	if v.RSS != nil {
		rows = append(rows, *v.RSS)
	}
	for _, c := range rows {
		change := "–"
		if c.Early > 0 {
			change = fmt.Sprintf("%+.1f%%", 100*(c.Late/c.Early-1))
		}
		flat := "yes"
		if !c.Flat {
			flat = "**no**"
		}
		if c.Steady {
			flat += " (steady over the second half: it did not grow there)"
		}
		if c.Audit {
			flat += fmt.Sprintf(" (audit, by rate: %+.2f → %+.2f MiB/min early → late; %.0f MiB a day, %.1f GiB at %d days)",
				c.EarlySlopePerMin/(1<<20), c.SlopePerMin/(1<<20), c.SlopePerMin*1440/(1<<20), c.SlopePerMin*1440*AuditDays/(1<<30), AuditDays)
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %+.2f MiB | %s |\n", c.Name, mib(c.Early), mib(c.Late), change, c.SlopePerMin/(1<<20), flat)
	}
}

func (r *Report) deliveryTable(b *strings.Builder) {
	b.WriteString("\n## Delivery\n\n| queue | group | pushed | received | lost | duplicates | failed pushes | received after a failed push | lost by a rule (history) |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, d := range r.Deliveries {
		for _, g := range d.Groups {
			fmt.Fprintf(b, "| %s | %s | %d | %d | %d | %d | %d | %d | %d |\n",
				d.Queue, g.Group, d.Pushed, g.Received, g.Lost, g.Dups, d.Failed, g.Unpushed, g.RecordedLost)
		}
		if d.Strangers > 0 {
			fmt.Fprintf(b, "| %s | (any) | | %d deliveries this run did not push | | | | | |\n", d.Queue, d.Strangers)
		}
	}
	fmt.Fprintf(b, "\nStill undelivered when the drain ended: %d.", r.Undelivered)
	for _, e := range r.Errors {
		if e.Count > 0 {
			fmt.Fprintf(b, " %s errors: %d (first: %s).", e.Kind, e.Count, e.First)
		}
	}
	b.WriteString("\n")
}

// Rejudge reads a soak.json and judges its samples again with this
// version's verdict (the tolerances or the tables' classes changed since
// it ran), noting so in the report.
func Rejudge(path, how string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	loaded := time.Duration(r.Verdict.Late.To * float64(time.Second))
	was := r.Verdict.Line()
	r.Verdict = Judge(loaded, r.Samples, r.Deliveries)
	r.Meta.Notes = append(r.Meta.Notes, fmt.Sprintf("verdict judged again (%s); as it ran: %s", how, was))
	return &r, nil
}

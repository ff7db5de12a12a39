package report

import (
	"fmt"
	"strings"

	"github.com/lethe-mq/lethe/bench/internal/meter"
	"github.com/lethe-mq/lethe/bench/internal/payload"
	"github.com/lethe-mq/lethe/bench/internal/result"
)

const profilesIntro = `One block per measured window of a -profile run; the txt beside each has the full tables (top 15 by flat and by cum, the heap's top 10, the top 8 statements with rows, blocks and WAL) and the raw .pprof files are beside it.
lethe CPU is over the window rounded up to whole seconds. PostgreSQL's statements come from pg_stat_statements with track = all: a nested statement ran inside a top-level one (lethe.append's PL/pgSQL) and is also inside its caller's time; shares are of the top-level total. Execution time leaves out the commit's WAL flush on both sides (PostgreSQL commits after the statement, COMMIT or autocommit), so a push's wall time is more than its execution.
For pushes, the cost divides the window's lethe CPU and PostgreSQL execution time by the messages and requests it counted, beside what the matching ceiling of the same run spent executing per row.
`

// Profiles is the section -profile adds to results.md ("" when nothing was
// profiled).
func Profiles(results []result.Result) string {
	var b strings.Builder
	for _, r := range results {
		if r.Profile == nil {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("\n## Profiles\n\n" + profilesIntro)
		}
		profileBlock(&b, r)
	}
	return b.String()
}

func profileBlock(b *strings.Builder, r result.Result) {
	p := r.Profile
	fmt.Fprintf(b, "\n### %s: %s, %s ([%s](%s))\n\n", r.System, r.Label, payload.Label(r.Payload), p.File, p.File)
	if p.Seconds > 0 {
		fmt.Fprintf(b, "- lethe CPU: %.2f s per second (%.2f s over %.0f s); heap in use at the end %.1f MiB; peak RSS %.0f MiB\n",
			p.CPUPerSecond, p.CPUSeconds, p.Seconds, p.HeapInuseMiB, p.PeakRSSMiB)
		fmt.Fprintf(b, "- hottest by flat: %s\n", funcList(p.TopFlat))
		fmt.Fprintf(b, "- lethe's own by cum: %s\n", funcList(p.TopOwnCum))
	}
	if len(p.Statements) > 0 || p.PGCalls > 0 {
		fmt.Fprintf(b, "- PostgreSQL: %s ms of top-level execution in %s calls; %s\n",
			meter.Group(int64(p.PGExecMs)), meter.Group(p.PGCalls), statementList(p.Statements))
	}
	if c := p.Cost; c != nil {
		fmt.Fprintf(b, "- cost: %s\n", costText(c))
	}
	if len(p.Problems) > 0 {
		fmt.Fprintf(b, "- not recorded: %s\n", truncate(strings.Join(p.Problems, "; "), 300))
	}
}

func funcList(fs []result.ProfileFunc) string {
	if len(fs) == 0 {
		return "–"
	}
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = fmt.Sprintf("`%s` %.1f %%", f.Name, f.Percent)
	}
	return strings.Join(parts, ", ")
}

func statementList(sts []result.ProfileStatement) string {
	if len(sts) == 0 {
		return "no statements"
	}
	parts := make([]string, len(sts))
	for i, s := range sts {
		nested := ""
		if !s.TopLevel {
			nested = " (nested)"
		}
		q := strings.ReplaceAll(truncate(s.Query, 90), "`", "'")
		parts[i] = fmt.Sprintf("`%s`%s %.2f ms mean, %.0f %%", q, nested, s.MeanMs, s.Share)
	}
	return strings.Join(parts, " · ")
}

func costText(c *result.PushCost) string {
	s := fmt.Sprintf("lethe CPU %.1f µs a message (%.0f µs a request); PostgreSQL %.1f µs a message (%.0f µs a request)",
		c.LetheCPUMicrosPerMsg, c.LetheCPUMicrosPerReq, c.PGExecMicrosPerMsg, c.PGExecMicrosPerReq)
	if c.Ceiling == "" {
		return s + "; no ceiling profiled in this run"
	}
	if c.CeilingMsgsPerRow == 1 {
		return s + fmt.Sprintf("; the ceiling (%s) %.1f µs a row of one message", shortCeilingKey(c.Ceiling), c.CeilingMicrosPerRow)
	}
	return s + fmt.Sprintf("; the ceiling (%s) %.1f µs a row of %d messages, %.2f µs a message",
		shortCeilingKey(c.Ceiling), c.CeilingMicrosPerRow, c.CeilingMsgsPerRow, c.CeilingMicrosPerMsg)
}

// shortCeilingKey names a ceiling by its key ("ceiling/insert/1024").
func shortCeilingKey(key string) string {
	parts := strings.Split(key, "/")
	if len(parts) < 2 {
		return key
	}
	return shortCeiling(parts[1])
}

package profiling

import (
	"fmt"
	"strings"

	"github.com/lethe-mq/lethe/bench/internal/meter"
)

// queryChars is how much of a statement's text the tables keep.
const queryChars = 200

// text is the window's txt: lethe's CPU top by flat and by cum, its heap
// and peak RSS, and PostgreSQL's costliest statements.
func (r *record) text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: the measured window of %s\n", r.name, r.key)
	if r.cpu != nil {
		cpu := float64(r.cpu.Total) / 1e9
		fmt.Fprintf(&b, "lethe CPU: %.2f s over %.1f s of wall (%.2f s of CPU per second); the profile covers the window rounded up to whole seconds\n",
			cpu, r.seconds, perSecond(cpu, r.seconds))
		fmt.Fprintf(&b, "\nlethe CPU, top %d by flat\n", topCPU)
		funcTable(&b, *r.cpu, r.cpu.ByFlat(topCPU), cpuSeconds)
		fmt.Fprintf(&b, "\nlethe CPU, top %d by cum\n", topCPU)
		funcTable(&b, *r.cpu, r.cpu.ByCum(topCPU, ""), cpuSeconds)
		fmt.Fprintf(&b, "\nlethe CPU, lethe's own functions, top %d by cum (a function handing %.0f%% of its cum to one other of lethe's is left out for it)\n",
			topOwn, 100*passThrough)
		funcTable(&b, *r.cpu, r.cpu.OwnByCum(topOwn), cpuSeconds)
	}
	if r.heap != nil {
		fmt.Fprintf(&b, "\nlethe heap in use at the end (after a GC): %s; top %d by flat\n", bytesText(r.heap.Total), topHeap)
		funcTable(&b, *r.heap, r.heap.ByFlat(topHeap), bytesText)
	}
	if r.peakRSS > 0 {
		fmt.Fprintf(&b, "\nlethe peak RSS over the scenario: %s\n", bytesText(r.peakRSS))
	}
	if r.pg != nil {
		statementTable(&b, r.database, *r.pg)
	}
	if len(r.problems) > 0 {
		b.WriteString("\nnot recorded:\n")
		for _, p := range r.problems {
			fmt.Fprintf(&b, "- %s\n", p)
		}
	}
	return b.String()
}

func funcTable(b *strings.Builder, t Top, funcs []Func, unit func(int64) string) {
	fmt.Fprintf(b, "%10s %7s %7s %10s %7s  %s\n", "flat", "flat%", "sum%", "cum", "cum%", "function")
	var sum int64
	for _, f := range funcs {
		sum += f.Flat
		fmt.Fprintf(b, "%10s %6.1f%% %6.1f%% %10s %6.1f%%  %s\n",
			unit(f.Flat), t.Percent(f.Flat), t.Percent(sum), unit(f.Cum), t.Percent(f.Cum), f.Name)
	}
}

func statementTable(b *strings.Builder, database string, st Statements) {
	fmt.Fprintf(b, "\nPostgreSQL, database %s: top %d statements by total_exec_time over the window (pg_stat_statements.track = all)\n",
		database, topStatements)
	fmt.Fprintf(b, "top-level statements: %s calls, %.1f ms of execution; a nested statement ran inside a top-level one (lethe.append's PL/pgSQL), whose time includes it\n",
		meter.Group(st.Calls), st.ExecMs)
	fmt.Fprintf(b, "%9s %11s %9s %9s %10s %9s %9s %11s %6s  %s\n",
		"calls", "total ms", "mean ms", "rows", "blks hit", "blks read", "dirtied", "wal bytes", "share", "level: query")
	for _, s := range st.Top {
		level := "top"
		if !s.TopLevel {
			level = "nested"
		}
		fmt.Fprintf(b, "%9d %11.1f %9.3f %9d %10d %9d %9d %11.0f %5.1f%%  %s: %s\n",
			s.Calls, s.TotalMs, s.MeanMs, s.Rows, s.Hit, s.Read, s.Dirtied, s.WALBytes, share(s.TotalMs, st.ExecMs), level, Query(s.Query))
	}
}

// Query is a statement's text on one line, cut to queryChars.
func Query(q string) string {
	q = strings.Join(strings.Fields(q), " ")
	if r := []rune(q); len(r) > queryChars {
		q = string(r[:queryChars]) + "…"
	}
	return q
}

func share(part, total float64) float64 {
	if total <= 0 {
		return 0
	}
	return 100 * part / total
}

func perSecond(v, seconds float64) float64 {
	if seconds <= 0 {
		return 0
	}
	return v / seconds
}

func cpuSeconds(ns int64) string { return fmt.Sprintf("%.2fs", float64(ns)/1e9) }

func bytesText(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1fMiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1fKiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%dB", n)
}

package soak

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }

// mb is bytes in MiB with one decimal, for table cells.
func mb(b int64) string { return fmt.Sprintf("%.1f", float64(b)/(1<<20)) }

// hotShare is the share of updates between two samples that were HOT
// (heap-only: no index entry written), or "–" without updates.
func hotShare(prev, cur TableSample) string {
	upd := cur.Updates - prev.Updates
	if upd <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f%% of %d", 100*float64(cur.HOTUpdates-prev.HOTUpdates)/float64(upd), upd)
}

// timeTable is one row per sample: the footprint's parts, cursors' churn,
// memory and latency of the interval.
func (r *Report) timeTable(b *strings.Builder) {
	b.WriteString("Sizes in MiB, every fork of a table (heap, TOAST, indexes); WAL written is since the previous sample; HOT is the share of the interval's updates of `lethe.cursors` that were heap-only; latencies in ms over the interval.\n\n")
	b.WriteString("| min | database | WAL on disk | WAL written | checkpoints (timed/req) | segments | txns | retention_history (rows) | retention_runs | cursors (dead tuples) | cursors HOT | RSS | push p50/p99 | e2e p50/p99 | pushed | received |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	var prev Sample
	for i, s := range r.Samples {
		seg, _ := s.Table("lethe.segments")
		txn, _ := s.Table("lethe.txns")
		hist, _ := s.Table("lethe.retention_history")
		runs, _ := s.Table("lethe.retention_runs")
		cur, _ := s.Table("lethe.cursors")
		wal := mb(s.WALBytes)
		if s.WALError != "" {
			wal = "n/a"
		}
		hot := "–"
		if i > 0 {
			pc, _ := prev.Table("lethe.cursors")
			hot = hotShare(pc, cur)
		}
		fmt.Fprintf(b, "| %.1f | %s | %s | %s | %d/%d | %s | %s | %s (%d) | %s | %s (%d) | %s | %s | %.1f/%.1f | %.1f/%.1f | %d | %d |\n",
			s.Elapsed/60, mb(s.DatabaseBytes), wal, mb(s.WALWritten), s.CheckpointsTimed, s.CheckpointsRequested,
			mb(seg.Total), mb(txn.Total), mb(hist.Total), hist.Live, mb(runs.Total), mb(cur.Total), cur.Dead, hot,
			mb(s.RSSBytes), s.Push.P50, s.Push.P99, s.E2E.P50, s.E2E.P99, s.Pushed, s.Received)
		prev = s
	}
}

// tableDetail is every table's forks and statistics at one sample, with
// the partitions of partitioned tables.
func (r *Report) tableDetail(b *strings.Builder, s Sample) {
	fmt.Fprintf(b, "\n## Every table at minute %.1f\n\n", s.Elapsed/60)
	b.WriteString("Sizes in MiB. Live and dead tuples are the statistics collector's estimates; HOT is over the whole soak.\n\n")
	b.WriteString("| table | heap | TOAST | indexes | total | live | dead | TOAST dead | HOT updates | autovacuums |\n|---|---|---|---|---|---|---|---|---|---|\n")
	row := func(name string, t TableSample) {
		hot := "–"
		if t.Updates > 0 {
			hot = fmt.Sprintf("%.0f%% of %d", 100*float64(t.HOTUpdates)/float64(t.Updates), t.Updates)
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %d | %d | %d | %s | %d |\n",
			name, mb(t.Heap), mb(t.Toast), mb(t.Index), mb(t.Total), t.Live, t.Dead, t.ToastDead, hot, t.Autovacuums)
	}
	for _, t := range s.Tables {
		row(t.Name, t)
		for _, p := range t.Partitions {
			row("↳ "+p.Name, p)
		}
	}
}

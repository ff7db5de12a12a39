package doctor

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/lethe-mq/lethe/client/api"
)

// historyTables are the records of what retention did, aged out by the
// metrics purge on METRICS_RETENTION_DAYS, with their time column.
var historyTables = []struct{ table, column string }{
	{"retention_history", "executed_at"},
	{"retention_losses", "executed_at"},
	{"retention_runs", "started_at"},
	{"reclaim_history", "executed_at"},
}

// checkHistory: the records must not grow forever (the job history needs
// a retention of its own), and the purge must keep up: no
// row older than the window and a day.
func checkHistory(ctx context.Context, q Querier, cfg Config) (string, string, string, error) {
	names := make([]string, len(historyTables))
	for i, t := range historyTables {
		names[i] = "lethe." + t.table
	}
	list := strings.Join(names, ", ")
	if cfg.MetricsRetentionDays <= 0 {
		return api.DoctorWarn, "METRICS_RETENTION_DAYS is off: " + list + " are never purged and grow by every cycle that deletes",
			"set METRICS_RETENTION_DAYS (90 by default) on every replica", nil
	}
	window := time.Duration(cfg.MetricsRetentionDays) * 24 * time.Hour
	late := cfg.Now.Add(-window - 24*time.Hour)
	var stale []string
	for _, t := range historyTables {
		var oldest *time.Time
		// Table and column names are the constants above, never input.
		if err := q.QueryRow(ctx, fmt.Sprintf(`SELECT min(%s) FROM lethe.%s`, t.column, t.table)).Scan(&oldest); err != nil {
			return "", "", "", fmt.Errorf("read the oldest row of lethe.%s: %w", t.table, err)
		}
		if oldest != nil && oldest.Before(late) {
			stale = append(stale, fmt.Sprintf("lethe.%s holds a row of %s", t.table, oldest.Format(time.RFC3339)))
		}
	}
	if len(stale) > 0 {
		return api.DoctorWarn, fmt.Sprintf("the metrics purge is behind its %d days: %s", cfg.MetricsRetentionDays, strings.Join(stale, "; ")),
			"check the retention-loop check above and the server log for 'metrics purge failed'", nil
	}
	return api.DoctorOK, fmt.Sprintf("%s are purged after %d days (METRICS_RETENTION_DAYS), in bounded steps, and none holds an older row",
		list, cfg.MetricsRetentionDays), "", nil
}

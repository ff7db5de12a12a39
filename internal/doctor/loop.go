package doctor

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/client/api"
)

// cleanupKey is the row of lethe.settings each retention cycle claims, at
// most once a minute across replicas, before its partition cleanup.
const cleanupKey = "retention.partition_cleanup"

// cleanupEvery is how often that claim succeeds while some replica's loop
// runs.
const cleanupEvery = time.Minute

// checkLoop dates the last cycle any replica ran by its claim of the
// partition cleanup, and counts the cycles recorded in the last day.
func checkLoop(ctx context.Context, q Querier, cfg Config) (string, string, string, error) {
	var recorded int64
	if err := q.QueryRow(ctx, `SELECT count(*) FROM lethe.retention_runs WHERE started_at > $1`,
		cfg.Now.Add(-24*time.Hour)).Scan(&recorded); err != nil {
		return "", "", "", fmt.Errorf("count retention cycles: %w", err)
	}
	bounds := fmt.Sprintf("every %s, each step one autocommitted statement that deletes at most %d rows (and 2 MiB of frames) "+
		"and writes its audit row in the same transaction; %d cycles that deleted something or failed recorded in lethe.retention_runs in the last 24 hours",
		cfg.Interval, cfg.BatchSize, recorded)
	if cfg.KeepPartitions {
		return api.DoctorWarn, "the loop runs " + bounds + "; partition cleanup is off (LETHE_PARTITION_CLEANUP_ENABLED=false), " +
				"so the database holds no mark of the loop's last cycle to check it by",
			"watch lethe_retention_cycles_total on each replica instead", nil
	}
	var last time.Time
	err := q.QueryRow(ctx, `SELECT updated_at FROM lethe.settings WHERE key = $1`, cleanupKey).Scan(&last)
	if errors.Is(err, pgx.ErrNoRows) {
		return api.DoctorWarn, "no replica has run a retention cycle on this database yet",
			"start lethe serve with retention on (RETENTION_INTERVAL); a fresh database gets its first cycle within one interval", nil
	}
	if err != nil {
		return "", "", "", fmt.Errorf("read the loop's last cycle: %w", err)
	}
	late := 3*max(cfg.Interval, cleanupEvery) + time.Minute
	ago := cfg.Now.Sub(last).Round(time.Second)
	if ago > late {
		return api.DoctorFail, fmt.Sprintf("no replica's retention loop has run a cycle since %s (%s ago, more than %s): nothing is being deleted",
				last.Format(time.RFC3339), ago, late),
			"check that a lethe replica is running with retention on, and its log for 'retention' errors", nil
	}
	return api.DoctorOK, fmt.Sprintf("last cycle %s ago; the loop runs %s", max(ago, 0), bounds), "", nil
}

// checkFailures reports the cycles of the last day that failed a step or
// stopped, with the newest failure's text.
func checkFailures(ctx context.Context, q Querier, cfg Config) (string, string, string, error) {
	var n int64
	var last *time.Time
	var text *string
	err := q.QueryRow(ctx, `
		SELECT count(*), max(started_at), (array_agg(error ORDER BY started_at DESC))[1]
		  FROM lethe.retention_runs
		 WHERE started_at > $1 AND coalesce(error, '') <> ''`, cfg.Now.Add(-24*time.Hour)).Scan(&n, &last, &text)
	if err != nil {
		return "", "", "", fmt.Errorf("read failed retention cycles: %w", err)
	}
	if n == 0 {
		return api.DoctorOK, "no cycle recorded a failure in the last 24 hours", "", nil
	}
	return api.DoctorWarn, fmt.Sprintf("%d cycles recorded failures in the last 24 hours, the newest at %s: %s",
			n, last.Format(time.RFC3339), *text),
		"a failed step is retried by the next cycle; a failure that repeats needs the server log's line for it (lethe retention history shows what was deleted)", nil
}

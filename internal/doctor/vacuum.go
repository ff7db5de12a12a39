package doctor

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/client/api"
)

// deadShare and deadFloor: a table is behind on vacuum when more than
// deadShare of its tuples (and more than deadFloor) are dead and nothing
// vacuumed it for an hour.
const (
	deadShare = 0.2
	deadFloor = 10_000
)

// checkVacuum needs autovacuum (and the statistics it runs on) on, no
// lethe table with it turned off, and no table far behind.
func checkVacuum(ctx context.Context, q Querier, _ Config) (string, string, string, error) {
	var autovacuum, trackCounts string
	if err := q.QueryRow(ctx, `SELECT current_setting('autovacuum'), current_setting('track_counts')`).
		Scan(&autovacuum, &trackCounts); err != nil {
		return "", "", "", fmt.Errorf("read the autovacuum settings: %w", err)
	}
	if autovacuum != "on" || trackCounts != "on" {
		return api.DoctorFail, fmt.Sprintf("autovacuum is %s and track_counts %s: nothing reclaims the rows retention deletes, "+
				"nor the cursors' and partitions' updated rows", autovacuum, trackCounts),
			"set autovacuum = on and track_counts = on in postgresql.conf and reload", nil
	}
	rows, err := q.Query(ctx, `
		SELECT c.relname::text
		  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		 WHERE n.nspname = 'lethe' AND c.relkind IN ('r', 'm')
		   AND c.reloptions && ARRAY['autovacuum_enabled=false', 'autovacuum_enabled=off', 'autovacuum_enabled=0']
		 ORDER BY 1`)
	if err != nil {
		return "", "", "", fmt.Errorf("read the tables' vacuum options: %w", err)
	}
	off, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return "", "", "", fmt.Errorf("read the tables' vacuum options: %w", err)
	}
	if len(off) > 0 {
		return api.DoctorFail, fmt.Sprintf("autovacuum is turned off on %d of lethe's tables: %s", len(off), strings.Join(off, ", ")),
			fmt.Sprintf("ALTER TABLE lethe.%s RESET (autovacuum_enabled);", off[0]), nil
	}
	// The statistics' times are the database's; the injected clock plays
	// no part in them.
	rows, err = q.Query(ctx, `
		SELECT relname::text, n_dead_tup, n_live_tup
		  FROM pg_stat_user_tables
		 WHERE schemaname = 'lethe'
		   AND n_dead_tup > greatest($1::bigint, $2::float8 * (n_live_tup + n_dead_tup))
		   AND coalesce(greatest(last_autovacuum, last_vacuum), '-infinity') < now() - interval '1 hour'
		 ORDER BY n_dead_tup DESC LIMIT 5`, deadFloor, deadShare)
	if err != nil {
		return "", "", "", fmt.Errorf("read the tables' dead tuples: %w", err)
	}
	var behind []string
	for rows.Next() {
		var name string
		var dead, live int64
		if err := rows.Scan(&name, &dead, &live); err != nil {
			rows.Close()
			return "", "", "", fmt.Errorf("read the tables' dead tuples: %w", err)
		}
		behind = append(behind, fmt.Sprintf("%s (%d dead, %d live)", name, dead, live))
	}
	if err := rows.Err(); err != nil {
		return "", "", "", fmt.Errorf("read the tables' dead tuples: %w", err)
	}
	if len(behind) > 0 {
		return api.DoctorWarn, fmt.Sprintf("autovacuum is on, but it has not vacuumed these tables for an hour while more than %.0f%% of their rows are dead: %s",
				deadShare*100, strings.Join(behind, "; ")),
			"look for a long-running transaction holding the horizon back (pg_stat_activity, xact_start), or raise autovacuum_max_workers", nil
	}
	return api.DoctorOK, "autovacuum and track_counts are on, no lethe table has it turned off, and none is an hour behind with a fifth of its rows dead " +
		"(segments and sidecar leaves are dropped whole; cursors and partitions take HOT updates)", "", nil
}

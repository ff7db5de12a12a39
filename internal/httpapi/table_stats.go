package httpapi

import (
	"fmt"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"
)

// TableStats is one table of the lethe schema as PostgreSQL's statistics
// see it: live and dead row versions and when it was last vacuumed and
// analyzed. Dead rows are space a deletion freed that VACUUM has not
// reclaimed yet.
type TableStats struct {
	Table           string     `json:"table"`
	LiveRows        int64      `json:"liveRows"`
	DeadRows        int64      `json:"deadRows"`
	LastVacuum      *time.Time `json:"lastVacuum"`
	LastAutovacuum  *time.Time `json:"lastAutovacuum"`
	LastAnalyze     *time.Time `json:"lastAnalyze"`
	LastAutoanalyze *time.Time `json:"lastAutoanalyze"`
}

// tableStatsSQL reads the cumulative statistics of the lethe schema's
// tables (partitions included), most dead rows first.
const tableStatsSQL = `
	SELECT schemaname || '.' || relname, n_live_tup, n_dead_tup,
	       last_vacuum, last_autovacuum, last_analyze, last_autoanalyze
	  FROM pg_catalog.pg_stat_user_tables
	 WHERE schemaname = 'lethe'
	 ORDER BY n_dead_tup DESC, relname`

func (s *Server) tableStats(w http.ResponseWriter, r *http.Request) error {
	rows, err := s.eng.Pool().Query(r.Context(), tableStatsSQL)
	if err != nil {
		return fmt.Errorf("table stats: %w", err)
	}
	tables, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (TableStats, error) {
		var t TableStats
		err := row.Scan(&t.Table, &t.LiveRows, &t.DeadRows, &t.LastVacuum, &t.LastAutovacuum, &t.LastAnalyze, &t.LastAutoanalyze)
		utcTimes(t.LastVacuum, t.LastAutovacuum, t.LastAnalyze, t.LastAutoanalyze)
		return t, err
	})
	if err != nil {
		return fmt.Errorf("table stats: %w", err)
	}
	if tables == nil {
		tables = []TableStats{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"tables": tables})
	return nil
}

func utcTimes(ts ...*time.Time) {
	for _, t := range ts {
		if t != nil {
			*t = t.UTC()
		}
	}
}

package profiling

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
)

// ServerSettings are what -profile starts the private PostgreSQL with:
// pg_stat_statements loaded, and tracking nested statements too (track =
// all), so the statements lethe.append runs inside PL/pgSQL show up beside
// the call itself; the toplevel column tells them apart. Without -profile
// the server runs without the extension.
func ServerSettings() map[string]string {
	return map[string]string{
		"shared_preload_libraries": "pg_stat_statements",
		"pg_stat_statements.track": "all",
	}
}

// NotProfiled marks the bench's own SQL that runs during a measured window
// (the sweep's count of frames left), so the statement tables leave it out.
const NotProfiled = "/* lethe-bench: not profiled */"

// Statement is one row of pg_stat_statements.
type Statement struct {
	Query              string
	TopLevel           bool
	Calls              int64
	TotalMs, MeanMs    float64
	Rows               int64
	Hit, Read, Dirtied int64 // shared blocks
	WALBytes           float64
}

// Statements is a database's costliest statements over a window, and the
// execution time and calls of all its top-level ones.
type Statements struct {
	Top    []Statement
	ExecMs float64
	Calls  int64
}

// statements reads pg_stat_statements, cluster-wide, through a connection
// to the maintenance database: the extension is created there, so no object
// of it lands in a database lethe or the ceiling owns.
type statements struct {
	pool *pgxpool.Pool
}

func openStatements(ctx context.Context, dsn string) (*statements, error) {
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("connect for pg_stat_statements: %w", err)
	}
	if _, err := pool.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pg_stat_statements`); err != nil {
		pool.Close()
		return nil, fmt.Errorf("create extension pg_stat_statements: %w", err)
	}
	// The view answers only when the library was preloaded at start.
	if _, err := pool.Exec(ctx, `SELECT 1 FROM pg_stat_statements LIMIT 1`); err != nil {
		pool.Close()
		return nil, fmt.Errorf("pg_stat_statements (is it in shared_preload_libraries?): %w", err)
	}
	return &statements{pool: pool}, nil
}

func (s *statements) reset(ctx context.Context) error {
	if _, err := s.pool.Exec(ctx, `SELECT pg_stat_statements_reset()`); err != nil {
		return fmt.Errorf("pg_stat_statements_reset: %w", err)
	}
	return nil
}

// top reads the n statements of database with the most execution time
// since the last reset, and the totals of its top-level statements.
func (s *statements) top(ctx context.Context, database string, n int) (Statements, error) {
	const where = `dbid = (SELECT oid FROM pg_database WHERE datname = $1) AND strpos(query, $2) = 0`
	var out Statements
	if err := s.pool.QueryRow(ctx, `
		SELECT coalesce(sum(total_exec_time), 0), coalesce(sum(calls), 0)::bigint
		  FROM pg_stat_statements WHERE toplevel AND `+where, database, NotProfiled).Scan(&out.ExecMs, &out.Calls); err != nil {
		return out, fmt.Errorf("pg_stat_statements totals of %s: %w", database, err)
	}
	rows, err := s.pool.Query(ctx, `
		SELECT query, toplevel, calls, total_exec_time, mean_exec_time, rows,
		       shared_blks_hit, shared_blks_read, shared_blks_dirtied, wal_bytes::float8
		  FROM pg_stat_statements WHERE `+where+`
		 ORDER BY total_exec_time DESC LIMIT $3`, database, NotProfiled, n)
	if err != nil {
		return out, fmt.Errorf("pg_stat_statements of %s: %w", database, err)
	}
	defer rows.Close()
	for rows.Next() {
		var st Statement
		if err := rows.Scan(&st.Query, &st.TopLevel, &st.Calls, &st.TotalMs, &st.MeanMs, &st.Rows,
			&st.Hit, &st.Read, &st.Dirtied, &st.WALBytes); err != nil {
			return out, fmt.Errorf("pg_stat_statements of %s: %w", database, err)
		}
		out.Top = append(out.Top, st)
	}
	return out, rows.Err()
}

func (s *statements) close() { s.pool.Close() }

package inspect

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/client/api"
)

// PostgresStats answers GET /api/v1/analytics/postgres-stats: Queen's
// statistics over schema lethe, the tables in Queen's shape with dead
// tuples, last autovacuum and bloat estimate, and lethe's sizes of the
// database, every relation of the schema and the WAL.
func (r *Reader) PostgresStats(ctx context.Context) (*api.PostgresStats, error) {
	st := &api.PostgresStats{Schema: "lethe", Tables: []api.TableSize{}}
	if err := r.queenStats(ctx, st); err != nil {
		return nil, err
	}
	if err := r.pool.QueryRow(ctx, `
		SELECT pg_database_size(current_database()), pg_size_pretty(pg_database_size(current_database()))`).
		Scan(&st.DatabaseBytes, &st.DatabaseSize); err != nil {
		return nil, fmt.Errorf("postgres stats: %w", err)
	}
	var err error
	if st.WAL, err = r.walUsage(ctx); err != nil {
		return nil, err
	}
	if st.TableSizes, err = r.tableSizes(ctx); err != nil {
		return nil, err
	}
	if st.Tables, err = r.relationSizes(ctx); err != nil {
		return nil, err
	}
	for _, t := range st.Tables {
		st.SchemaBytes += t.TotalBytes
	}
	return st, r.addDeadTuples(ctx, st.Tables)
}

// tableSizesSQL sizes each lethe table that is not a partition, summing a
// partitioned table's partitions wherever they live: sizes, dead tuples,
// the latest autovacuum, and the bloat estimate (heap bytes times the dead
// share of the rows, per partition).
const tableSizesSQL = `
	WITH roots AS (
		SELECT c.oid, c.relname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
		 WHERE n.nspname = 'lethe' AND c.relkind IN ('r', 'p') AND NOT c.relispartition
	), parts AS (
		SELECT r.oid AS root, r.relname, coalesce(t.relid, r.oid) AS relid
		  FROM roots r LEFT JOIN LATERAL (SELECT l.relid FROM pg_catalog.pg_partition_tree(r.oid) l WHERE l.isleaf) t ON true
	), sized AS (
		SELECT p.root, p.relname, pg_total_relation_size(p.relid) AS total, pg_relation_size(p.relid) AS heap,
		       pg_indexes_size(p.relid) AS idx, coalesce(s.n_dead_tup, 0) AS dead, s.last_autovacuum,
		       CASE WHEN s.n_live_tup + s.n_dead_tup > 0
		            THEN pg_relation_size(p.relid) * s.n_dead_tup / (s.n_live_tup + s.n_dead_tup) ELSE 0 END AS bloat
		  FROM parts p LEFT JOIN pg_catalog.pg_stat_all_tables s ON s.relid = p.relid
	)
	SELECT relname, pg_size_pretty(sum(total)), sum(total)::bigint, pg_size_pretty(sum(heap)), sum(heap)::bigint,
	       pg_size_pretty(sum(idx)), sum(idx)::bigint, sum(dead)::bigint, max(last_autovacuum), sum(bloat)::bigint
	  FROM sized GROUP BY root, relname ORDER BY sum(total) DESC, relname`

func (r *Reader) tableSizes(ctx context.Context) ([]api.QueenTableSize, error) {
	rows, err := r.pool.Query(ctx, tableSizesSQL)
	if err != nil {
		return nil, fmt.Errorf("postgres stats: table sizes: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (api.QueenTableSize, error) {
		var t api.QueenTableSize
		err := row.Scan(&t.Table, &t.TotalSize, &t.TotalSizeBytes, &t.TableSize, &t.TableSizeBytes,
			&t.IndexSize, &t.IndexSizeBytes, &t.DeadTuples, &t.LastAutovacuum, &t.BloatEstimateBytes)
		utcPtr(t.LastAutovacuum)
		return t, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres stats: table sizes: %w", err)
	}
	return out, nil
}

// relationSizes sizes every relation of the lethe schema, partitions
// included, largest first.
func (r *Reader) relationSizes(ctx context.Context) ([]api.TableSize, error) {
	rows, err := r.pool.Query(ctx, `
		SELECT n.nspname || '.' || c.relname,
		       pg_total_relation_size(c.oid), pg_relation_size(c.oid),
		       CASE WHEN c.reltoastrelid <> 0 THEN pg_total_relation_size(c.reltoastrelid) ELSE 0 END,
		       pg_indexes_size(c.oid),
		       pg_size_pretty(pg_total_relation_size(c.oid)), pg_size_pretty(pg_relation_size(c.oid)),
		       pg_size_pretty(pg_indexes_size(c.oid)),
		       c.reltuples::bigint
		  FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
		 WHERE n.nspname = 'lethe' AND c.relkind IN ('r', 'p')
		 ORDER BY pg_total_relation_size(c.oid) DESC, c.relname`)
	if err != nil {
		return nil, fmt.Errorf("postgres stats: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (api.TableSize, error) {
		var t api.TableSize
		err := row.Scan(&t.Table, &t.TotalBytes, &t.TableBytes, &t.ToastBytes, &t.IndexBytes,
			&t.TotalSize, &t.TableSize, &t.IndexSize, &t.RowEstimate)
		return t, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres stats: %w", err)
	}
	if out == nil {
		out = []api.TableSize{}
	}
	return out, nil
}

// addDeadTuples fills each table's DeadTuples from the statistics
// collector: rows deleted or updated away that vacuum has not yet made
// reusable. A partitioned table is credited with its partitions', wherever
// they live.
func (r *Reader) addDeadTuples(ctx context.Context, tables []api.TableSize) error {
	rows, err := r.pool.Query(ctx, `
		SELECT n.nspname || '.' || c.relname, sum(s.n_dead_tup)::bigint
		  FROM pg_catalog.pg_stat_all_tables s
		  JOIN pg_catalog.pg_class c ON c.oid = coalesce(pg_catalog.pg_partition_root(s.relid), s.relid)
		  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
		 WHERE n.nspname = 'lethe'
		 GROUP BY 1`)
	if err != nil {
		return fmt.Errorf("postgres stats: dead tuples: %w", err)
	}
	dead := map[string]int64{}
	var name string
	var n int64
	if _, err := pgx.ForEachRow(rows, []any{&name, &n}, func() error {
		dead[name] = n
		return nil
	}); err != nil {
		return fmt.Errorf("postgres stats: dead tuples: %w", err)
	}
	for i := range tables {
		tables[i].DeadTuples = dead[tables[i].Table]
	}
	return nil
}

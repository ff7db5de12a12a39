package retention

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
)

// addDeadTuples fills each table's DeadTuples from the statistics
// collector: rows deleted or updated away that vacuum has not yet made
// reusable. A partitioned table is credited with its partitions', wherever
// they live.
func addDeadTuples(ctx context.Context, pool *pgxpool.Pool, tables []TableSize) error {
	rows, err := pool.Query(ctx, `
		SELECT n.nspname || '.' || c.relname, sum(s.n_dead_tup)::bigint
		  FROM pg_catalog.pg_stat_all_tables s
		  JOIN pg_catalog.pg_class c ON c.oid = coalesce(pg_catalog.pg_partition_root(s.relid), s.relid)
		  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
		 WHERE n.nspname = 'lethe'
		 GROUP BY 1`)
	if err != nil {
		return fmt.Errorf("postgres stats: dead tuples: %w", err)
	}
	defer rows.Close()
	dead := map[string]int64{}
	for rows.Next() {
		var name string
		var n int64
		if err := rows.Scan(&name, &n); err != nil {
			return fmt.Errorf("postgres stats: dead tuples: %w", err)
		}
		dead[name] = n
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("postgres stats: dead tuples: %w", err)
	}
	for i := range tables {
		tables[i].DeadTuples = dead[tables[i].Table]
	}
	return nil
}

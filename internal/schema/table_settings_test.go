package schema_test

import (
	"context"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lethe-mq/lethe/internal/pgtest"
)

// reloptions reads a table's storage parameters, and its TOAST table's.
func reloptions(t *testing.T, pool *pgxpool.Pool, table string) (heap, toast []string) {
	t.Helper()
	err := pool.QueryRow(context.Background(), `
		SELECT coalesce(c.reloptions, '{}'), coalesce(tc.reloptions, '{}')
		  FROM pg_catalog.pg_class c LEFT JOIN pg_catalog.pg_class tc ON tc.oid = c.reltoastrelid
		 WHERE c.oid = $1::regclass`, table).Scan(&heap, &toast)
	if err != nil {
		t.Fatalf("reloptions of %s: %v", table, err)
	}
	return heap, toast
}

func requireOption(t *testing.T, table, which string, opts []string, want string) {
	t.Helper()
	if !slices.Contains(opts, want) {
		t.Errorf("%s: %s options %v lack %s", table, which, opts, want)
	}
}

// leavesOf lists a partitioned table's leaf partitions (none, in a fresh
// database, for those whose leaves the server creates at start), or the
// table itself when it is a plain one.
func leavesOf(t *testing.T, pool *pgxpool.Pool, table string) []string {
	t.Helper()
	rows, err := pool.Query(context.Background(), `
		SELECT $1::regclass::text WHERE NOT EXISTS (SELECT 1 FROM pg_catalog.pg_partition_tree($1::regclass))
		UNION ALL
		SELECT relid::regclass::text FROM pg_catalog.pg_partition_tree($1::regclass) WHERE isleaf`, table)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatalf("leaves of %s: %v", table, err)
	}
	return out
}

// Migration 090 gives the high-churn tables (and their TOAST tables) their
// autovacuum settings: each leaf of the partitioned ones (segments and
// the sidecar, partitioned by the retention tiers).
func TestHighChurnTablesHaveTheirSettings(t *testing.T) {
	t.Parallel()
	pool := newPool(t, pgtest.NewDatabase(t))
	for table, want := range map[string][]string{
		"lethe.segments":          {"autovacuum_vacuum_scale_factor=0.05", "autovacuum_vacuum_threshold=500"},
		"lethe.txns":              {"autovacuum_vacuum_scale_factor=0.02"},
		"lethe.cursors":           {"fillfactor=50", "autovacuum_vacuum_scale_factor=0", "autovacuum_vacuum_threshold=100", "autovacuum_vacuum_cost_delay=0"},
		"lethe.partitions":        {"fillfactor=70", "autovacuum_vacuum_threshold=100"},
		"lethe.retention_history": {"autovacuum_vacuum_scale_factor=0.01"},
		"lethe.retention_runs":    {"autovacuum_vacuum_scale_factor=0.01"},
	} {
		for _, leaf := range leavesOf(t, pool, table) {
			heap, _ := reloptions(t, pool, leaf)
			for _, w := range want {
				requireOption(t, leaf, "heap", heap, w)
			}
		}
	}
	for _, leaf := range leavesOf(t, pool, "lethe.segments") {
		_, toast := reloptions(t, pool, leaf)
		requireOption(t, leaf, "TOAST", toast, "autovacuum_vacuum_scale_factor=0.05")
	}
	if heap, _ := reloptions(t, pool, "lethe.queues"); len(heap) != 0 {
		t.Errorf("lethe.queues got settings %v; it is not a high-churn table", heap)
	}
}

// A partitioned table's settings go to each of its leaves, chosen by the
// root's name, wherever the partition lives; applying them to one new
// partition touches only it.
func TestApplyTableSettingsToPartitions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := newPool(t, pgtest.NewDatabase(t))
	// This database's sidecar becomes a partitioned table, as the
	// retention tiers make it.
	_, err := pool.Exec(ctx, `
		DROP TABLE lethe.txns;
		CREATE TABLE lethe.txns (partition_id uuid NOT NULL, base_offset bigint NOT NULL,
		                         created_at timestamptz NOT NULL, hashes bigint[] NOT NULL)
		       PARTITION BY RANGE (created_at);
		CREATE SCHEMA parts;
		CREATE TABLE parts.txns_d1 PARTITION OF lethe.txns FOR VALUES FROM ('2030-01-01') TO ('2030-01-02')
		       PARTITION BY HASH (partition_id);
		CREATE TABLE parts.txns_d1_h0 PARTITION OF parts.txns_d1 FOR VALUES WITH (MODULUS 2, REMAINDER 0);
		CREATE TABLE parts.txns_d1_h1 PARTITION OF parts.txns_d1 FOR VALUES WITH (MODULUS 2, REMAINDER 1);
		CREATE TABLE lethe.txns_d2 PARTITION OF lethe.txns FOR VALUES FROM ('2030-01-02') TO ('2030-01-03')`)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT lethe.apply_table_settings('lethe.txns')`).Scan(&n); err != nil {
		t.Fatalf("apply to the parent: %v", err)
	}
	if n != 3 {
		t.Errorf("applied to %d tables, want the 3 leaves", n)
	}
	for _, leaf := range []string{"parts.txns_d1_h0", "parts.txns_d1_h1", "lethe.txns_d2"} {
		heap, _ := reloptions(t, pool, leaf)
		requireOption(t, leaf, "heap", heap, "autovacuum_vacuum_scale_factor=0.02")
	}

	if _, err := pool.Exec(ctx, `CREATE TABLE lethe.txns_d3 PARTITION OF lethe.txns
		FOR VALUES FROM ('2030-01-03') TO ('2030-01-04')`); err != nil {
		t.Fatal(err)
	}
	if heap, _ := reloptions(t, pool, "lethe.txns_d3"); len(heap) != 0 {
		t.Fatalf("a new partition inherited %v; the test assumes PostgreSQL copies nothing", heap)
	}
	if err := pool.QueryRow(ctx, `SELECT lethe.apply_table_settings('lethe.txns_d3')`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("apply to one new partition: %d tables, %v; want 1", n, err)
	}
	heap, _ := reloptions(t, pool, "lethe.txns_d3")
	requireOption(t, "lethe.txns_d3", "heap", heap, "autovacuum_vacuum_scale_factor=0.02")

	if err := pool.QueryRow(ctx, `SELECT lethe.apply_table_settings('lethe.queues')`).Scan(&n); err != nil || n != 0 {
		t.Errorf("a table without settings: altered %d (%v), want 0", n, err)
	}
}

// A leaf the tiers create later (ahead of time, or by the append that needs
// it) gets its table's settings too (lethe.create_leaf, migration 053).
func TestNewLeavesGetTheirSettings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := newPool(t, pgtest.NewDatabase(t))
	for _, c := range []struct{ tier, want string }{
		{"1w", "autovacuum_vacuum_scale_factor=0.05"}, {"held", "autovacuum_vacuum_scale_factor=0.05"},
		{"txns", "autovacuum_vacuum_scale_factor=0.02"},
	} {
		var leaf string
		if err := pool.QueryRow(ctx, `SELECT lethe.create_leaf($1, '2031-03-04 05:06:07+00')`, c.tier).Scan(&leaf); err != nil {
			t.Fatalf("create a %s leaf: %v", c.tier, err)
		}
		heap, _ := reloptions(t, pool, "lethe."+leaf)
		requireOption(t, leaf, "heap", heap, c.want)
	}
}

package schema_test

import (
	"context"
	"slices"
	"testing"

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

// Migration 090 gives the high-churn tables (and their TOAST tables) their
// autovacuum settings.
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
		heap, _ := reloptions(t, pool, table)
		for _, w := range want {
			requireOption(t, table, "heap", heap, w)
		}
	}
	_, toast := reloptions(t, pool, "lethe.segments")
	requireOption(t, "lethe.segments", "TOAST", toast, "autovacuum_vacuum_scale_factor=0.05")
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

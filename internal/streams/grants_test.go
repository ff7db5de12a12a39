package streams_test

import (
	"context"
	"testing"
)

// Queen grants its streams tables to PUBLIC, so any holder of a
// database credential reads and writes them. lethe's streams and traces
// tables must exist in schema lethe and grant PUBLIC nothing (the pattern
// of schema's TestMigrateGrantsNothingToPublic, on these tables by name so
// that the check cannot pass because they are elsewhere).
func TestStreamsAndTracesTablesGrantPublicNothing(t *testing.T) {
	t.Parallel()
	b := setup(t, 0)
	tables := []string{"stream_queries", "stream_state", "reclaim_history", "traces"}
	rows, err := b.srv.Pool.Query(context.Background(), `
		SELECT c.relname, coalesce(string_agg(a.privilege_type, ',') FILTER (WHERE a.grantee = 0), '')
		  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		  LEFT JOIN LATERAL aclexplode(coalesce(c.relacl, acldefault('r', c.relowner))) a ON true
		 WHERE n.nspname = 'lethe' AND c.relkind = 'r' AND c.relname = ANY($1)
		 GROUP BY c.relname`, tables)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	seen := map[string]bool{}
	for rows.Next() {
		var table, public string
		if err := rows.Scan(&table, &public); err != nil {
			t.Fatal(err)
		}
		seen[table] = true
		if public != "" {
			t.Errorf("lethe.%s grants PUBLIC %s", table, public)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for _, table := range tables {
		if !seen[table] {
			t.Errorf("table lethe.%s does not exist", table)
		}
	}
	var schemaPublic int
	if err := b.srv.Pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_namespace n,
		aclexplode(coalesce(n.nspacl, acldefault('n', n.nspowner))) a WHERE n.nspname = 'lethe' AND a.grantee = 0`).
		Scan(&schemaPublic); err != nil || schemaPublic != 0 {
		t.Errorf("schema lethe grants PUBLIC %d privileges (err %v)", schemaPublic, err)
	}
}

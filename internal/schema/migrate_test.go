package schema_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lethe-mq/lethe/internal/pgtest"
	"github.com/lethe-mq/lethe/internal/schema"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func newPool(t *testing.T, dsn string) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

func allVersions(t *testing.T) []int {
	t.Helper()
	migs, err := schema.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, m := range migs {
		out = append(out, m.Version)
	}
	if len(out) == 0 {
		t.Fatal("no embedded migrations")
	}
	return out
}

func TestMigrateTwiceIsANoOp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := newPool(t, pgtest.NewEmptyDatabase(t))
	applied, err := schema.Migrate(ctx, pool)
	if err != nil {
		t.Fatalf("first migrate: %v", err)
	}
	if want := allVersions(t); !slices.Equal(applied, want) {
		t.Errorf("first migrate applied %v, want %v", applied, want)
	}
	again, err := schema.Migrate(ctx, pool)
	if err != nil || len(again) != 0 {
		t.Errorf("second migrate applied %v (%v), want nothing", again, err)
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM lethe.schema_migrations`).Scan(&n); err != nil || n != len(applied) {
		t.Errorf("schema_migrations has %d rows (%v), want %d", n, err, len(applied))
	}
}

// Replicas starting together on a fresh database: every migration is applied
// exactly once and every replica starts.
func TestMigrateConcurrentOnFreshDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := pgtest.NewEmptyDatabase(t)
	const replicas = 3
	pools := make([]*pgxpool.Pool, replicas)
	for i := range pools {
		pools[i] = newPool(t, dsn)
	}
	applied := make([][]int, replicas)
	errs := make([]error, replicas)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range replicas {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			applied[i], errs[i] = schema.Migrate(ctx, pools[i])
		}()
	}
	close(start)
	wg.Wait()
	var all []int
	for i := range replicas {
		if errs[i] != nil {
			t.Errorf("replica %d: migrate: %v", i, errs[i])
		}
		all = append(all, applied[i]...)
	}
	slices.Sort(all)
	if want := allVersions(t); !slices.Equal(all, want) {
		t.Errorf("replicas applied %v between them, want each of %v exactly once", all, want)
	}
	if n := repeatableRows(t, pools[0]); n != 1 {
		t.Errorf("the function files were applied %d times between the replicas, want once", n)
	}
}

// repeatableRows counts the applications of function files recorded.
func repeatableRows(t *testing.T, pool *pgxpool.Pool) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM lethe.schema_repeatables`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Nothing in schema lethe may be granted to PUBLIC: a database user who is
// not lethe's must not read messages or call its functions. A NULL acl means
// the default privileges, which for functions include EXECUTE for PUBLIC.
func TestMigrateGrantsNothingToPublic(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := newPool(t, pgtest.NewEmptyDatabase(t))
	if _, err := schema.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	rows, err := pool.Query(ctx, `
		SELECT 'schema ' || n.nspname, a.privilege_type
		  FROM pg_namespace n, aclexplode(coalesce(n.nspacl, acldefault('n', n.nspowner))) a
		 WHERE n.nspname = 'lethe' AND a.grantee = 0
		UNION ALL
		SELECT CASE c.relkind WHEN 'S' THEN 'sequence ' ELSE 'relation ' END || c.relname, a.privilege_type
		  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace,
		       aclexplode(coalesce(c.relacl, acldefault(CASE c.relkind WHEN 'S' THEN 's' ELSE 'r' END::"char", c.relowner))) a
		 WHERE n.nspname = 'lethe' AND a.grantee = 0
		UNION ALL
		SELECT 'function ' || p.oid::regprocedure::text, a.privilege_type
		  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace,
		       aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) a
		 WHERE n.nspname = 'lethe' AND a.grantee = 0`)
	if err != nil {
		t.Fatal(err)
	}
	grants, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) {
		var obj, priv string
		err := r.Scan(&obj, &priv)
		return priv + " on " + obj, err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(grants) > 0 {
		t.Errorf("granted to PUBLIC:\n%s", strings.Join(grants, "\n"))
	}
	// The check itself must see objects: a schema with no functions or
	// tables would pass vacuously.
	var tables, funcs int
	_ = pool.QueryRow(ctx, `SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = 'lethe' AND c.relkind = 'r'`).Scan(&tables)
	_ = pool.QueryRow(ctx, `SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
		WHERE n.nspname = 'lethe'`).Scan(&funcs)
	if tables < 5 || funcs < 1 {
		t.Errorf("schema lethe has %d tables and %d functions; the check saw too little", tables, funcs)
	}
	t.Logf("checked %d tables and %d functions", tables, funcs)
}

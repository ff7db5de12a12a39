package inspect

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/pgtest"
)

// Rows deleted and not yet vacuumed are reported against their table.
func TestPostgresStatsCountsDeadTuples(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := walPool(t, pgtest.NewDatabase(t))
	deleteSettings(t, pool, 20)
	tables := []api.TableSize{{Table: "lethe.settings"}, {Table: "lethe.queues"}}
	for deadline := time.Now().Add(30 * time.Second); ; {
		if err := New(Config{Pool: pool}).addDeadTuples(ctx, tables); err != nil {
			t.Fatal(err)
		}
		if tables[0].DeadTuples >= 20 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("lethe.settings shows %d dead tuples after deleting 20", tables[0].DeadTuples)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if tables[1].DeadTuples != 0 {
		t.Errorf("lethe.queues shows %d dead tuples; nothing was deleted there", tables[1].DeadTuples)
	}
}

// deleteSettings inserts n rows and deletes them, leaving n dead tuples
// (under autovacuum's threshold of 50, so nobody vacuums them away while
// the test looks), and flushes the statistics.
func deleteSettings(t *testing.T, pool *pgxpool.Pool, n int) {
	t.Helper()
	ctx := context.Background()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	_, err = conn.Exec(ctx, `INSERT INTO lethe.settings (key, value, updated_at)
		SELECT 'dead-' || i, '1', now() FROM generate_series(1, $1) i`, n)
	if err == nil {
		_, err = conn.Exec(ctx, `DELETE FROM lethe.settings WHERE key LIKE 'dead-%'`)
	}
	if err == nil {
		_, err = conn.Exec(ctx, `SELECT pg_stat_force_next_flush()`)
	}
	if err != nil {
		t.Fatal(err)
	}
}

package retention

import (
	"context"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/internal/pgtest"
)

// Rows deleted and not yet vacuumed are reported against their table.
func TestPostgresStatsCountsDeadTuples(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := walPool(t, pgtest.NewDatabase(t))
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// 20 rows stay under autovacuum's threshold (50): nobody vacuums them
	// away while the test looks.
	_, err = conn.Exec(ctx, `INSERT INTO lethe.settings (key, value, updated_at)
		SELECT 'dead-' || i, '1', now() FROM generate_series(1, 20) i`)
	if err == nil {
		_, err = conn.Exec(ctx, `DELETE FROM lethe.settings WHERE key LIKE 'dead-%'`)
	}
	if err == nil {
		_, err = conn.Exec(ctx, `SELECT pg_stat_force_next_flush()`)
	}
	conn.Release()
	if err != nil {
		t.Fatal(err)
	}
	tables := []TableSize{{Table: "lethe.settings"}, {Table: "lethe.queues"}}
	for deadline := time.Now().Add(30 * time.Second); ; {
		if err := addDeadTuples(ctx, pool, tables); err != nil {
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

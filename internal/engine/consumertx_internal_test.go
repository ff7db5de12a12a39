package engine

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lethe-mq/lethe/internal/pgtest"
)

// A consumer transaction begins with synchronous_commit off in its one
// BEGIN round trip, and the setting ends with it. Not parallel: a paused
// test of package engine would look like an engine goroutine to
// TestCoreCloseWaitsForEveryGoroutine.
func TestConsumerTxCommitsAsynchronously(t *testing.T) {
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 1
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	e := &Engine{pool: pool}
	var inside, after string
	if err := e.consumerTx(ctx, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, "SHOW synchronous_commit").Scan(&inside)
	}); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, "SHOW synchronous_commit").Scan(&after); err != nil {
		t.Fatal(err)
	}
	if inside != "off" || after != "on" {
		t.Errorf("synchronous_commit inside a consumer transaction %q, after it %q; want off, on", inside, after)
	}
}

package engine

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lethe-mq/lethe/internal/pgtest"
)

// oneConnEngine is an Engine over a pool of one connection, so a
// connection left inside a transaction would show in the next use.
func oneConnEngine(t *testing.T) (*Engine, *pgxpool.Pool) {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 1
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if _, err := pool.Exec(context.Background(), `CREATE TABLE t (k int PRIMARY KEY, v int NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	return &Engine{pool: pool}, pool
}

func rowsOf(t *testing.T, pool *pgxpool.Pool) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM t`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A deferred statement runs in the transaction: with the next statement,
// which sees it, or with COMMIT. Not parallel, like the test above.
func TestPipelinedTxRunsDeferredStatements(t *testing.T) {
	ctx := context.Background()
	e, pool := oneConnEngine(t)
	err := e.consumerTx(ctx, func(tx pgx.Tx) error {
		var one int
		if err := tx.QueryRow(ctx, `SELECT 1`).Scan(&one); err != nil {
			return err
		}
		if err := deferExec(ctx, tx, "insert 1", `INSERT INTO t VALUES (1, 1)`); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM t`).Scan(&n); err != nil || n != 1 {
			t.Errorf("the next statement saw %d rows (%v), want the deferred insert's 1", n, err)
		}
		return deferExec(ctx, tx, "insert 2", `INSERT INTO t VALUES (2, 2)`)
	})
	if err != nil || rowsOf(t, pool) != 2 {
		t.Fatalf("consumer transaction: %v, %d rows, want both deferred inserts committed", err, rowsOf(t, pool))
	}
}

// A deferred statement that fails fails the commit with its label, takes
// the transaction's earlier writes with it, and leaves the connection
// usable; a transaction whose function fails drops what it deferred.
func TestPipelinedTxFailsWholeOrNotAtAll(t *testing.T) {
	ctx := context.Background()
	e, pool := oneConnEngine(t)
	err := e.consumerTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO t VALUES (1, 1)`); err != nil {
			return err
		}
		return deferExec(ctx, tx, "save the thing", `INSERT INTO t VALUES (1, 2)`) // duplicate key
	})
	if err == nil || !strings.Contains(err.Error(), "save the thing") || !strings.Contains(err.Error(), "duplicate key") {
		t.Fatalf("commit with a failing deferred statement: %v, want its labelled duplicate-key error", err)
	}
	if n := rowsOf(t, pool); n != 0 {
		t.Fatalf("%d rows after the failed commit, want 0: the first insert must roll back with it", n)
	}

	refused := errors.New("refused")
	err = e.consumerTx(ctx, func(tx pgx.Tx) error {
		var one int
		if err := tx.QueryRow(ctx, `SELECT 1`).Scan(&one); err != nil {
			return err
		}
		if err := deferExec(ctx, tx, "insert", `INSERT INTO t VALUES (3, 3)`); err != nil {
			return err
		}
		return refused
	})
	if !errors.Is(err, refused) || rowsOf(t, pool) != 0 {
		t.Fatalf("a failed function: %v, %d rows, want its error and nothing written", err, rowsOf(t, pool))
	}

	// An error in the first pipeline (BEGIN and the statement) rolls back too.
	err = e.consumerTx(ctx, func(tx pgx.Tx) error {
		var x int
		return tx.QueryRow(ctx, `SELECT 1 / 0`).Scan(&x)
	})
	if err == nil || !strings.Contains(err.Error(), "division by zero") {
		t.Fatalf("a failing first statement: %v, want division by zero", err)
	}
	if err := e.consumerTx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO t VALUES (4, 4)`)
		return err
	}); err != nil || rowsOf(t, pool) != 1 {
		t.Fatalf("the one connection after the failures: %v, %d rows, want it usable and 1 row", err, rowsOf(t, pool))
	}
}

// A consumer transaction commits without waiting for the WAL flush and
// plans its statements generically, whether its first statement reads one
// row or many; the settings end with it. Fails when a setting is dropped
// from beginQueries, or when Query sends it in a round trip of its own
// that is lost.
func TestConsumerTxSettings(t *testing.T) {
	ctx := context.Background()
	e, pool := oneConnEngine(t)
	for _, first := range []string{"row", "rows"} {
		err := e.consumerTx(ctx, func(tx pgx.Tx) error {
			const q = `SELECT current_setting('synchronous_commit'), current_setting('plan_cache_mode')`
			var sync, plans string
			if first == "row" {
				if err := tx.QueryRow(ctx, q).Scan(&sync, &plans); err != nil {
					return err
				}
			} else {
				rows, err := tx.Query(ctx, q)
				if err != nil {
					return err
				}
				if _, err := pgx.ForEachRow(rows, []any{&sync, &plans}, func() error { return nil }); err != nil {
					return err
				}
			}
			if sync != "off" || plans != "force_generic_plan" {
				t.Errorf("first statement by %s: synchronous_commit %s, plan_cache_mode %s; want off, force_generic_plan", first, sync, plans)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var plans string
	if err := pool.QueryRow(ctx, `SELECT current_setting('plan_cache_mode')`).Scan(&plans); err != nil || plans != "auto" {
		t.Errorf("after the transaction plan_cache_mode is %s (%v), want auto", plans, err)
	}
}

// A many-row first statement that fails mid-way fails the transaction, and
// the connection is left usable (one connection: a pipeline left unread
// would break the next use).
func TestPipelinedTxQueryError(t *testing.T) {
	ctx := context.Background()
	e, pool := oneConnEngine(t)
	err := e.consumerTx(ctx, func(tx pgx.Tx) error {
		if err := deferExec(ctx, tx, "insert 1", `INSERT INTO t VALUES (1, 1)`); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT 10 / (2 - g) FROM generate_series(1, 3) g`)
		if err != nil {
			return err
		}
		var n int
		_, err = pgx.ForEachRow(rows, []any{&n}, func() error { return nil })
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "division by zero") {
		t.Fatalf("the transaction answered %v, want the division by zero", err)
	}
	if n := rowsOf(t, pool); n != 0 {
		t.Errorf("%d rows after the failed transaction, want 0: its deferred insert committed", n)
	}
}

package lethebench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// retentionLockID is the advisory lock the server's retention loop takes
// for a cycle (RETENTION_LOCK_ID, default 737001).
func retentionLockID() int64 {
	if n, err := strconv.ParseInt(os.Getenv("RETENTION_LOCK_ID"), 10, 64); err == nil {
		return n
	}
	return 737001
}

// Reset empties lethe's log (queues, partitions, segments, hashes and
// everything hanging off them) so each scenario starts from an empty
// database instead of the previous scenario's leftovers. It holds the
// retention loop's advisory lock meanwhile, so no cycle runs into the
// TRUNCATE. Queue names are unique per scenario, so nothing the server
// cached is reused.
func Reset(ctx context.Context, env *Env) error {
	var err error
	// A sweep the previous scenario left running (a backlog larger than
	// its time limit) holds the lock for the rest of its cycle: wait for
	// it up to five minutes.
	for attempt := 1; attempt <= 10; attempt++ {
		err = pgx.BeginFunc(ctx, env.Pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SET LOCAL lock_timeout = '30s'`); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, retentionLockID()); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `TRUNCATE lethe.queues, lethe.partitions, lethe.segments, lethe.txns CASCADE`)
			return err
		})
		var pgErr *pgconn.PgError
		if err == nil || !errors.As(err, &pgErr) || (pgErr.Code != "40P01" && pgErr.Code != "55P03") {
			break
		}
		time.Sleep(time.Second)
	}
	if err != nil {
		return fmt.Errorf("reset lethe: %w", err)
	}
	return nil
}

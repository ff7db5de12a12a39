package lethebench

import (
	"context"
	"fmt"
)

// Reset empties lethe's log (queues, partitions, segments, hashes and
// everything hanging off them) so each scenario starts from an empty
// database instead of the previous scenario's leftovers. Queue names are
// unique per scenario, so nothing the server cached is reused.
func Reset(ctx context.Context, env *Env) error {
	tx, err := env.Pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("reset lethe: %w", err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SET LOCAL lock_timeout = '20s'`); err != nil {
		return fmt.Errorf("reset lethe: %w", err)
	}
	if _, err := tx.Exec(ctx, `TRUNCATE lethe.queues, lethe.partitions, lethe.segments, lethe.txns CASCADE`); err != nil {
		return fmt.Errorf("reset lethe: %w", err)
	}
	return tx.Commit(ctx)
}

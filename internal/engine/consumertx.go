package engine

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// consumerTx runs fn in a transaction that writes only consumer state
// (cursors, leases, dead letters), committed without waiting for the WAL
// flush. Profiles of pop+ack showed most of their time in that wait. A
// crash can lose the last few hundred milliseconds of such commits; each
// lost write means a message is delivered again (a lease or ack forgotten,
// a cursor not yet advanced), never that one is lost: redelivery over loss,
// as everywhere in lethe. Pushes and transactions that push keep
// synchronous commit. BEGIN and the setting travel with the transaction's
// first statement, and its deferred last statement with COMMIT
// (pipelinedTx): no round trip of the transaction's own.
func (e *Engine) consumerTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	c, err := e.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("begin a consumer transaction: %w", err)
	}
	defer c.Release()
	tx := &pipelinedTx{conn: c.Conn()}
	defer func() {
		if !tx.closed { // fn panicked
			_ = tx.Rollback(ctx)
		}
	}()
	if err := fn(tx); err != nil {
		_ = tx.Rollback(ctx)
		return err
	}
	return tx.Commit(ctx)
}

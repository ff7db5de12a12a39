package engine

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// consumerTx runs fn in a transaction that writes only consumer state
// (cursors, leases, dead letters), committed without waiting for the WAL
// flush. Profiles of pop+ack showed most of their time in that wait. A
// crash can lose the last few hundred milliseconds of such commits; each
// lost write means a message is delivered again (a lease or ack forgotten,
// a cursor not yet advanced), never that one is lost: redelivery over loss,
// as everywhere in lethe. Pushes and transactions that push keep
// synchronous commit.
func (e *Engine) consumerTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, e.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SET LOCAL synchronous_commit = off"); err != nil {
			return err
		}
		return fn(tx)
	})
}

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
// synchronous commit. BEGIN and the setting go in one round trip (one
// simple-protocol message), which every pop and ack makes.
func (e *Engine) consumerTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return pgx.BeginTxFunc(ctx, e.pool, consumerTxOptions, fn)
}

var consumerTxOptions = pgx.TxOptions{BeginQuery: "BEGIN; SET LOCAL synchronous_commit = off"}

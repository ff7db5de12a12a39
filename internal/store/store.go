// Package store is the only code that knows how lethe stores a partition's
// messages: frames packed into segment rows (lethe.segments) with a
// transaction-id hash sidecar (lethe.txns). Everything else appends and
// reads through it, so a new layout (time-partitioned segments, a held area)
// is a change to this package, its SQL functions (lethe.append,
// lethe.txn_offset and the lethe.store_* functions of migration 020) and
// its tests.
//
// Besides the log's layout it holds the engine's other statements on
// lethe's tables, each behind a named function (queues.go, groups.go,
// deadletters.go, history.go), so the engine keeps SQL of its own only on
// its hot path (a test of internal/archtest lists those files).
//
// The contract, stated by the tests of this package against PostgreSQL:
//   - offsets of a partition are assigned in commit order and only grow;
//   - they need not be contiguous: retention removes whole segments, and
//     readers skip what is not stored, never assuming that every offset
//     from a low watermark exists;
//   - a transaction id is stored once per partition (while its hash is
//     kept): a repeat is answered with the first offset;
//   - whatever bytes a segment holds, reading it answers: a frame that
//     cannot be decoded comes back as an unreadable offset (Frame.Err), not
//     as an error for the whole read.
//
// The package imports nothing of lethe's but frame (a test checks it).
package store

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Querier is what the store runs its statements on: the pool, a connection
// or a transaction (so an append or read can join the caller's).
type Querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// ErrPartitionGone answers an append to a partition that was deleted.
var ErrPartitionGone = errors.New("partition no longer exists")

// ErrUnreadable marks a stored offset whose frame cannot be decoded
// (Frame.Err wraps it).
var ErrUnreadable = errors.New("stored message is unreadable")

// TxnHash is the sidecar key of a transaction id: 64 bits of SHA-256, so a
// producer cannot craft ids that collide with another's.
func TxnHash(txnID string) int64 {
	sum := sha256.Sum256([]byte(txnID))
	return int64(binary.BigEndian.Uint64(sum[:8]))
}

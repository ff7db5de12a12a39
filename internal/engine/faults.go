package engine

import (
	"errors"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lethe-mq/lethe/internal/frame"
	"github.com/lethe-mq/lethe/internal/store"
)

// errCorruptState marks stored consumer state of a partition that cannot be
// used (a cursor whose lease arrays disagree, say).
var errCorruptState = errors.New("stored state is inconsistent")

// partitionFault tells whether err is about what one partition stores
// (data PostgreSQL refuses or cannot read, a damaged frame, inconsistent
// state) rather than about the database or the request. Such an error
// skips that partition, logged and counted, and the others are served; any
// other error (connection lost, timeout, cancellation) fails the request,
// since it would fail every partition alike.
func partitionFault(err error) bool {
	if errors.Is(err, errCorruptState) || errors.Is(err, store.ErrUnreadable) || errors.Is(err, frame.ErrCorrupt) {
		return true
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || len(pgErr.Code) < 2 {
		return false
	}
	switch pgErr.Code[:2] {
	case "22", // data exception: a value PostgreSQL cannot take (NUL in text, bad encoding)
		"23", // integrity constraint violation
		"54", // program limit exceeded (a row too large)
		"XX": // internal error: data corrupted, a TOAST chunk missing
		return true
	}
	return false
}

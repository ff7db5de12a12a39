package store

import (
	"encoding/binary"
	"errors"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lethe-mq/lethe/internal/frame"
)

// MessageID names the message at offset of partition pid. It is derived, not
// stored: the partition's first 8 bytes and the offset, shaped as a UUID.
func MessageID(pid uuid.UUID, offset int64) string {
	var id uuid.UUID
	copy(id[:8], pid[:8])
	binary.BigEndian.PutUint64(id[8:], uint64(offset))
	return id.String()
}

// DataFault tells whether err is about what one partition stores (data
// PostgreSQL refuses or cannot read, a damaged frame) rather than about the
// database or the request: a reader skips that partition, logged and
// counted, and serves the others. Any other error (connection lost,
// timeout, cancellation) would fail every partition alike.
func DataFault(err error) bool {
	if errors.Is(err, ErrUnreadable) || errors.Is(err, frame.ErrCorrupt) {
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

package store

import (
	"encoding/binary"
	"errors"
	"strings"

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

// MintedID is the transaction id lethe gives the message at offset of
// partition pid when its producer gave none: a UUIDv8 holding 60 bits of
// the partition's id (all of a random UUID's first 64 bits but its version)
// and the offset. It says where the message is, so its frame stores no id
// and the sidecar no hash (migration 153); MintedOffset reads it back.
func MintedID(pid uuid.UUID, offset int64) string {
	var id uuid.UUID
	copy(id[:8], pid[:8])
	id[6] = 0x80 | pid[6]&0x0f                                         // version 8
	binary.BigEndian.PutUint64(id[8:], uint64(offset)&(1<<62-1)|1<<63) // variant 10
	return id.String()
}

// MintedForm says id may be one MintedID made (for some partition): a
// canonical version 8 UUID. It is the cheap test before MintedOffset.
func MintedForm(id string) bool {
	return len(id) == 36 && id[14] == '8' && strings.IndexByte("89ab", id[19]) >= 0
}

// MintedOffset is the offset that id names in partition pid when id is in
// MintedID's form for pid (as lethe writes it: canonical and lower case).
// Any other id is a producer's, found through the sidecar.
func MintedOffset(pid uuid.UUID, id string) (int64, bool) {
	if !MintedForm(id) {
		return 0, false
	}
	u, err := uuid.Parse(id)
	if err != nil || u.Variant() != uuid.RFC4122 || u.String() != id ||
		[6]byte(u[:6]) != [6]byte(pid[:6]) || u[6]&0x0f != pid[6]&0x0f || u[7] != pid[7] {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(u[8:]) & (1<<62 - 1)), true
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

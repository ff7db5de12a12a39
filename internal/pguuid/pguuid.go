// Package pguuid makes pgx move github.com/google/uuid values as
// PostgreSQL's 16-byte binary uuid. Without it pgx reaches them through
// their database/sql methods: every uuid parameter is formatted to 36
// characters and planned again as a string, and every uuid column is
// formatted and parsed back (3.5 % of lethe's CPU in a pop+ack profile).
package pguuid

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// Register replaces m's uuid and uuid[] types with ones that know
// uuid.UUID. Call it on every connection (pgxpool.Config.AfterConnect).
func Register(m *pgtype.Map) {
	t := &pgtype.Type{Name: "uuid", OID: pgtype.UUIDOID, Codec: codec{}}
	m.RegisterType(t)
	m.RegisterType(&pgtype.Type{Name: "_uuid", OID: pgtype.UUIDArrayOID, Codec: &pgtype.ArrayCodec{ElementType: t}})
}

// codec is pgx's uuid codec with binary plans for uuid.UUID added; every
// other value and format goes to pgx's own.
type codec struct{ pgtype.UUIDCodec }

func (c codec) PlanEncode(m *pgtype.Map, oid uint32, format int16, value any) pgtype.EncodePlan {
	if format == pgtype.BinaryFormatCode {
		if _, ok := value.(uuid.UUID); ok {
			return encodeBinary{}
		}
	}
	return c.UUIDCodec.PlanEncode(m, oid, format, value)
}

func (c codec) PlanScan(m *pgtype.Map, oid uint32, format int16, target any) pgtype.ScanPlan {
	if format == pgtype.BinaryFormatCode {
		if _, ok := target.(*uuid.UUID); ok {
			return scanBinary{}
		}
	}
	return c.UUIDCodec.PlanScan(m, oid, format, target)
}

type encodeBinary struct{}

func (encodeBinary) Encode(value any, buf []byte) ([]byte, error) {
	u := value.(uuid.UUID)
	return append(buf, u[:]...), nil
}

type scanBinary struct{}

func (scanBinary) Scan(src []byte, dst any) error {
	if src == nil {
		return fmt.Errorf("cannot scan NULL into *uuid.UUID")
	}
	if len(src) != 16 {
		return fmt.Errorf("invalid length for uuid: %d", len(src))
	}
	copy(dst.(*uuid.UUID)[:], src)
	return nil
}

// AfterConnect registers the types on a new connection; it fits
// pgxpool.Config.AfterConnect.
func AfterConnect(_ context.Context, c *pgx.Conn) error {
	Register(c.TypeMap())
	return nil
}

package pguuid_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/lethe-mq/lethe/internal/pgtest"
	"github.com/lethe-mq/lethe/internal/pguuid"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestUUIDsRoundTripAsBinary sends and reads every shape of uuid lethe
// passes (a value, a pointer, nil, a slice, NULL in a slice's place)
// through a registered connection and an unregistered one: the same
// answers, and the registered one never formats a uuid as text.
func TestUUIDsRoundTripAsBinary(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewEmptyDatabase(t)
	plain, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close(ctx)
	fast, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer fast.Close(ctx)
	pguuid.Register(fast.TypeMap())

	a, b := uuid.New(), uuid.New()
	type answer struct {
		one     uuid.UUID
		ptr     *uuid.UUID
		null    *uuid.UUID
		list    []uuid.UUID
		textual string
	}
	ask := func(c *pgx.Conn) answer {
		t.Helper()
		var got answer
		err := c.QueryRow(ctx, `SELECT $1::uuid, $2::uuid, $3::uuid, $4::uuid[], $1::uuid::text`, a, &b, (*uuid.UUID)(nil), []uuid.UUID{a, b}).
			Scan(&got.one, &got.ptr, &got.null, &got.list, &got.textual)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	for name, c := range map[string]*pgx.Conn{"unregistered": plain, "registered": fast} {
		got := ask(c)
		if got.one != a || got.ptr == nil || *got.ptr != b || got.null != nil || !slices.Equal(got.list, []uuid.UUID{a, b}) ||
			got.textual != a.String() {
			t.Errorf("%s connection: got %+v, want %s, %s, nil, [%s %s]", name, got, a, b, a, b)
		}
	}

	var u uuid.UUID
	if err := fast.QueryRow(ctx, `SELECT NULL::uuid`).Scan(&u); err == nil {
		t.Error("NULL scanned into a uuid.UUID without an error")
	}
}

// TestRegisteredPlansAreBinary checks that the registered map plans
// uuid.UUID without its database/sql methods (which format 36 characters).
func TestRegisteredPlansAreBinary(t *testing.T) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.NewEmptyDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	m := conn.TypeMap()
	pguuid.Register(m)
	u := uuid.New()
	buf, err := m.Encode(pgtype.UUIDOID, pgtype.BinaryFormatCode, u, nil)
	if err != nil || len(buf) != 16 || string(buf) != string(u[:]) {
		t.Fatalf("binary encode of %s: %x, %v", u, buf, err)
	}
	valuer := m.PlanEncode(pgtype.UUIDOID, pgtype.BinaryFormatCode, u)
	if name := fmt.Sprintf("%T", valuer); name != "pguuid.encodeBinary" {
		t.Errorf("uuid.UUID is encoded by %s, not lethe's binary plan", name)
	}
	if name := fmt.Sprintf("%T", m.PlanScan(pgtype.UUIDOID, pgtype.BinaryFormatCode, &u)); name != "pguuid.scanBinary" {
		t.Errorf("*uuid.UUID is scanned by %s, not lethe's binary plan", name)
	}
}

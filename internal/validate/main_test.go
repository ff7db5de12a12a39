package validate

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// What Storable accepts, PostgreSQL stores as jsonb; what it refuses for a
// string's content (not a number, where lethe is stricter than jsonb),
// PostgreSQL refuses too.
func TestStorableAgreesWithPostgres(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, c := range storableCases {
		var ignored string
		pgErr := conn.QueryRow(ctx, `SELECT $1::text::jsonb::text`, c.json).Scan(&ignored)
		_, _, problem := scanStorable([]byte(c.json))
		stringProblem := problem == problemNUL || problem == problemSurrogate || problem == problemBadUTF8
		switch {
		case c.ok && pgErr != nil:
			t.Errorf("Storable accepts %q, PostgreSQL refuses it: %v", c.json, pgErr)
		case stringProblem && pgErr == nil:
			t.Errorf("Storable refuses %q (%s), PostgreSQL stores it", c.json, problem)
		}
	}
	for _, n := range []string{"1e308", "-1.7976931348623157e308", "5e-324", "0e-9999", "0e9999",
		"0." + strings.Repeat("7", NumberMaxBytes-2)} {
		if NumberProblem([]byte(n)) != "" {
			t.Fatalf("%s: expected to be accepted", n)
		}
		var ignored string
		if err := conn.QueryRow(ctx, `SELECT $1::text::jsonb::text`, n).Scan(&ignored); err != nil {
			t.Errorf("NumberProblem accepts %s, PostgreSQL refuses it: %v", n, err)
		}
	}
}

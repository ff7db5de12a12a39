package schema_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/internal/pgtest"
	"github.com/lethe-mq/lethe/internal/schema"
)

// A role that owns only schema lethe, with no right on the database,
// migrates a first install and starts again later.
func TestMigrateAsSchemaOwnerOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	role, roleDSN := pgtest.NewRole(t, "lethe_app")
	adminDSN := pgtest.NewEmptyDatabase(t)
	admin := newPool(t, adminDSN)
	ident := pgx.Identifier{role}.Sanitize()
	if _, err := admin.Exec(ctx, "CREATE SCHEMA lethe AUTHORIZATION "+ident); err != nil {
		t.Fatal(err)
	}
	var canCreate bool
	if err := admin.QueryRow(ctx, "SELECT has_database_privilege($1, current_database(), 'CREATE')", role).Scan(&canCreate); err != nil {
		t.Fatal(err)
	}
	if canCreate {
		t.Fatalf("role %s may create schemas in the database; the test would prove nothing", role)
	}

	app := newPool(t, roleDSN(adminDSN))
	applied, err := schema.Migrate(ctx, app)
	if err != nil {
		t.Fatalf("first install as %s: %v", role, err)
	}
	if want := allVersions(t); !slices.Equal(applied, want) {
		t.Fatalf("first install applied %v, want %v", applied, want)
	}
	again, err := schema.Migrate(ctx, app)
	if err != nil || len(again) != 0 {
		t.Fatalf("later start as %s applied %v (%v), want nothing", role, again, err)
	}
}

// Without the schema, such a role is told in one line what a superuser
// must run.
func TestMigrateWithoutRightsSaysWhatToGrant(t *testing.T) {
	t.Parallel()
	role, roleDSN := pgtest.NewRole(t, "lethe_app")
	dsn := pgtest.NewEmptyDatabase(t)
	_, err := schema.Migrate(context.Background(), newPool(t, roleDSN(dsn)))
	if err == nil {
		t.Fatal("a role without CREATE on the database created schema lethe")
	}
	msg := err.Error()
	if !strings.Contains(msg, "CREATE SCHEMA lethe AUTHORIZATION "+pgx.Identifier{role}.Sanitize()) || strings.Contains(msg, "\n") {
		t.Fatalf("error %q: want one line saying to run CREATE SCHEMA lethe AUTHORIZATION %s", msg, role)
	}
}

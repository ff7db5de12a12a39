package pgtest

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/url"
	"testing"

	"github.com/jackc/pgx/v5"
)

// NewRole creates a login role with no rights beyond PostgreSQL's defaults
// for this test alone, named prefix plus a random suffix, and drops it
// when the test ends. as turns a connection string from NewDatabase or
// NewEmptyDatabase into one that logs in as the role.
//
// Call it before creating the databases the role will own objects in:
// cleanups run last first, so those databases are dropped before it.
func NewRole(t testing.TB, prefix string) (name string, as func(connString string) string) {
	t.Helper()
	s, err := get()
	if err != nil {
		t.Fatal(err)
	}
	name = databaseName(prefix)
	password := rand.Text()
	ctx, cancel := context.WithTimeout(context.Background(), ddlTimeout)
	defer cancel()
	// A password only matters on a shared server (EnvURL); the private
	// one trusts its private socket. Random text needs no quoting.
	if _, err := s.pool.Exec(ctx, "CREATE ROLE "+pgx.Identifier{name}.Sanitize()+" LOGIN PASSWORD '"+password+"'"); err != nil {
		t.Fatalf("pgtest: create role %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), ddlTimeout)
		defer cancel()
		if _, err := s.pool.Exec(ctx, "DROP ROLE IF EXISTS "+pgx.Identifier{name}.Sanitize()); err != nil {
			t.Errorf("pgtest: drop role %s: %v", name, err)
		}
	})
	return name, func(conn string) string { return withUser(conn, name, password) }
}

// withUser sets the user and password of a URL or key=value connection
// string (a repeated key overrides the earlier one).
func withUser(conn, user, password string) string {
	if u, err := url.Parse(conn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		u.User = url.UserPassword(user, password)
		q := u.Query()
		q.Del("user")
		q.Del("password")
		u.RawQuery = q.Encode()
		return u.String()
	}
	return fmt.Sprintf("%s user=%s password=%s", conn, user, password)
}

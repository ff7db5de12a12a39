package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// ddlTimeout bounds CREATE and DROP DATABASE; they take milliseconds.
const ddlTimeout = 30 * time.Second

// NewDatabase creates an empty database for this test alone, drops it
// when the test ends, and returns a pgx connection string for it.
//
// It copies template0, which nobody can connect to, so the copy is always
// pristine and concurrent creations never trip over "source database is
// being accessed by other users".
func NewDatabase(t testing.TB) string {
	t.Helper()
	s, err := get()
	if err != nil {
		t.Fatal(err)
	}
	name := databaseName(t.Name())
	ident := pgx.Identifier{name}.Sanitize()
	ctx, cancel := context.WithTimeout(context.Background(), ddlTimeout)
	defer cancel()
	if _, err := s.pool.Exec(ctx, "CREATE DATABASE "+ident+" TEMPLATE template0"); err != nil {
		t.Fatalf("pgtest: create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), ddlTimeout)
		defer cancel()
		// FORCE ends sessions the test left open, which would otherwise
		// block the drop.
		if _, err := s.pool.Exec(ctx, "DROP DATABASE IF EXISTS "+ident+" WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: drop database %s: %v", name, err)
		}
	})
	return s.connString(name)
}

// connString points the admin connection string at another database.
func (s *server) connString(dbname string) string {
	if s.cluster != nil {
		return s.cluster.ConnString(dbname)
	}
	return withDatabase(s.admin, dbname)
}

// withDatabase replaces the database in a URL or key=value connection
// string. Our names are [a-z0-9_], so key=value needs no quoting, and a
// repeated key overrides the earlier one.
func withDatabase(conn, dbname string) string {
	if u, err := url.Parse(conn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		u.Path = "/" + dbname
		u.RawPath = ""
		q := u.Query()
		q.Del("dbname") // would override the path
		u.RawQuery = q.Encode()
		return u.String()
	}
	return conn + " dbname=" + dbname
}

var notIdent = regexp.MustCompile(`[^a-z0-9]+`)

// databaseName makes a unique, valid name that still says which test
// made it, which helps when a server is shared or a drop fails. The
// random suffix keeps names unique across test binaries sharing one
// server via LETHE_TEST_DATABASE_URL.
func databaseName(testName string) string {
	base := strings.Trim(notIdent.ReplaceAllString(strings.ToLower(testName), "_"), "_")
	if len(base) > 40 {
		base = strings.TrimRight(base[:40], "_")
	}
	var b [4]byte
	rand.Read(b[:])
	return "t_" + base + "_" + hex.EncodeToString(b[:])
}

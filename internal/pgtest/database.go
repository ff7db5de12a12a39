package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// ddlTimeout bounds CREATE and DROP DATABASE; they take milliseconds.
const ddlTimeout = 30 * time.Second

// NewDatabase creates a database for this test alone, with lethe's
// schema already migrated, drops it when the test ends, and returns a pgx
// connection string for it. It is a copy of a template migrated once per
// test binary, so schema.Migrate on it applies nothing.
func NewDatabase(t testing.TB) string {
	t.Helper()
	return newDatabase(t, true)
}

// NewEmptyDatabase is NewDatabase without lethe's schema, for tests of
// the migrations themselves or of who may create the schema. It copies
// template0, which nobody can connect to, so the copy is always pristine.
func NewEmptyDatabase(t testing.TB) string {
	t.Helper()
	return newDatabase(t, false)
}

func newDatabase(t testing.TB, migrated bool) string {
	t.Helper()
	s, err := get()
	if err != nil {
		t.Fatal(err)
	}
	name, err := s.createDatabase(t.Name(), migrated)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.dropDatabase(name); err != nil {
			t.Error(err)
		}
	})
	return s.connString(name)
}

// createDatabase copies the migrated template or template0 under a fresh
// name made from label.
func (s *server) createDatabase(label string, migrated bool) (string, error) {
	source := "template0"
	if migrated {
		var err error
		if source, err = s.migratedTemplate(); err != nil {
			return "", err
		}
	}
	name := databaseName(label)
	ctx, cancel := context.WithTimeout(context.Background(), ddlTimeout)
	defer cancel()
	sql := "CREATE DATABASE " + pgx.Identifier{name}.Sanitize() + " TEMPLATE " + pgx.Identifier{source}.Sanitize()
	if _, err := s.pool.Exec(ctx, sql); err != nil {
		return "", fmt.Errorf("pgtest: create database %s: %w", name, err)
	}
	return name, nil
}

// dropDatabase drops a test's database. FORCE ends sessions the test left
// open, which would otherwise block the drop.
func (s *server) dropDatabase(name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), ddlTimeout)
	defer cancel()
	if _, err := s.pool.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("pgtest: drop database %s: %w", name, err)
	}
	return nil
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

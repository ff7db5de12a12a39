// Package pgtest gives every package's tests a real PostgreSQL.
//
// Each test binary gets one private server (started on first use, so
// packages whose selected tests need no database pay nothing), and each
// test gets its own database, so tests can run in parallel without seeing
// each other's rows:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		t.Parallel()
//		conn, err := pgx.Connect(ctx, pgtest.NewDatabase(t))
//		...
//	}
//
// NewDatabase's database already has lethe's schema: it is a copy
// (CREATE DATABASE ... TEMPLATE) of a database migrated once per test
// binary, so the migrations run once per binary, not once per test.
// NewEmptyDatabase gives a database without it.
//
// The private server is a throwaway one (pgembed.Config.Throwaway): it
// does not flush to disk, which survives any crash of the server but not
// of the machine.
//
// Set LETHE_TEST_DATABASE_URL to use an existing server instead (its user
// needs CREATEDB); no private server is started then.
package pgtest

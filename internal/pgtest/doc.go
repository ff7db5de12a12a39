// Package pgtest gives every package's tests a real PostgreSQL.
//
// Each test binary gets one private server (started on first use, so
// packages whose selected tests need no database pay nothing), and each
// test gets its own fresh database, so tests can run in parallel without
// seeing each other's rows:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		t.Parallel()
//		conn, err := pgx.Connect(ctx, pgtest.NewDatabase(t))
//		...
//	}
//
// Set LETHE_TEST_DATABASE_URL to use an existing server instead (its user
// needs CREATEDB); no private server is started then.
package pgtest

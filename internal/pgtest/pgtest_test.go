package pgtest

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lethe-mq/lethe/internal/schema"
)

func TestMain(m *testing.M) { Main(m) }

func open(t *testing.T, connString string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, connString)
	if err != nil {
		t.Fatalf("connect %q: %v", connString, err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func TestNewDatabaseGivesIsolatedDatabases(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b := open(t, NewDatabase(t)), open(t, NewDatabase(t))

	var nameA, nameB string
	if err := a.QueryRow(ctx, "SELECT current_database()").Scan(&nameA); err != nil {
		t.Fatal(err)
	}
	if err := b.QueryRow(ctx, "SELECT current_database()").Scan(&nameB); err != nil {
		t.Fatal(err)
	}
	if nameA == nameB || nameA == "postgres" {
		t.Fatalf("databases not distinct: %q and %q", nameA, nameB)
	}
	var tables int
	if err := a.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").Scan(&tables); err != nil {
		t.Fatal(err)
	}
	if tables != 0 {
		t.Fatalf("new database has %d tables, want empty", tables)
	}

	if _, err := a.Exec(ctx, "CREATE TABLE only_in_a (v int); INSERT INTO only_in_a VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	var exists bool
	if err := b.QueryRow(ctx, "SELECT to_regclass('only_in_a') IS NOT NULL").Scan(&exists); err != nil {
		t.Fatal(err)
	}
	if exists {
		t.Fatal("table created in one test database is visible in the other")
	}
}

// Every NewDatabase is a copy of one template migrated once: the rows of
// schema_migrations carry the template's applied_at, and migrating again
// applies nothing.
func TestNewDatabaseIsMigratedOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	migs, err := schema.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	var stamps []string
	for range 2 {
		dsn := NewDatabase(t)
		pool, err := pgxpool.New(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Close()
		var n int
		var stamp string
		err = pool.QueryRow(ctx, `SELECT count(*), max(applied_at)::text FROM lethe.schema_migrations`).Scan(&n, &stamp)
		if err != nil || n != len(migs) {
			t.Fatalf("schema_migrations: %d rows (%v), want %d", n, err, len(migs))
		}
		stamps = append(stamps, stamp)
		if applied, err := schema.Migrate(ctx, pool); err != nil || len(applied) != 0 {
			t.Fatalf("Migrate on a NewDatabase applied %v (%v), want nothing", applied, err)
		}
	}
	if stamps[0] != stamps[1] {
		t.Fatalf("databases migrated separately (applied_at %s and %s), want copies of one template", stamps[0], stamps[1])
	}
}

func TestNewEmptyDatabaseHasNoSchema(t *testing.T) {
	t.Parallel()
	conn := open(t, NewEmptyDatabase(t))
	var exists bool
	if err := conn.QueryRow(context.Background(), `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = 'lethe')`).Scan(&exists); err != nil {
		t.Fatal(err)
	}
	if exists {
		t.Fatal("NewEmptyDatabase has schema lethe")
	}
}

func TestNewDatabaseIsDroppedAfterTest(t *testing.T) {
	t.Parallel()
	var name string
	t.Run("user", func(t *testing.T) {
		conn := open(t, NewDatabase(t))
		if err := conn.QueryRow(context.Background(), "SELECT current_database()").Scan(&name); err != nil {
			t.Fatal(err)
		}
		// Leave conn open on purpose: the drop must force it closed.
	})
	admin := open(t, AdminConnString())
	var n int
	if err := admin.QueryRow(context.Background(), "SELECT count(*) FROM pg_database WHERE datname = $1", name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if name == "" || n != 0 {
		t.Fatalf("database %q still exists after its test ended (count %d)", name, n)
	}
}

func TestNewDatabaseInParallel(t *testing.T) {
	t.Parallel()
	for i := range 8 {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			t.Parallel()
			conn := open(t, NewDatabase(t))
			var one int
			if err := conn.QueryRow(context.Background(), "SELECT 1").Scan(&one); err != nil || one != 1 {
				t.Fatalf("SELECT 1 = %d, %v", one, err)
			}
		})
	}
}

func TestDatabaseName(t *testing.T) {
	long := strings.Repeat("TestSomething/With Spaces/", 10)
	a, b := databaseName(long), databaseName(long)
	if a == b {
		t.Fatalf("names not unique: %q", a)
	}
	if len(a) > 63 {
		t.Fatalf("name %q longer than PostgreSQL's 63 bytes", a)
	}
	if strings.Trim(a, "abcdefghijklmnopqrstuvwxyz0123456789_") != "" {
		t.Fatalf("name %q has characters needing quotes", a)
	}
}

func TestWithDatabase(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u:p@h:5/postgres?sslmode=disable":    "postgres://u:p@h:5/x?sslmode=disable",
		"postgresql://h/db?dbname=other":                 "postgresql://h/x",
		"host=/tmp port=5 user=postgres dbname=postgres": "host=/tmp port=5 user=postgres dbname=postgres dbname=x",
	} {
		if got := withDatabase(in, "x"); got != want {
			t.Errorf("withDatabase(%q) = %q, want %q", in, got, want)
		}
	}
}

// A test binary killed outright (go test -timeout, Ctrl-C, SIGKILL) never
// returns from Main; its server and files must still go away.
func TestWatchdogCleansUpAfterKill(t *testing.T) {
	if os.Getenv("PGTEST_WATCHDOG_CHILD") == "1" {
		s, err := get()
		if err != nil {
			t.Fatal(err)
		}
		pid, _ := os.ReadFile(filepath.Join(s.cluster.Dir(), "data", "postmaster.pid"))
		first, _, _ := strings.Cut(string(pid), "\n")
		fmt.Printf("CHILD %s %s\n", first, s.cluster.Dir())
		time.Sleep(time.Minute) // wait to be killed
		return
	}
	if os.Getenv(EnvURL) != "" {
		t.Skip("no private server when " + EnvURL + " is set")
	}
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^TestWatchdogCleansUpAfterKill$", "-test.count=1")
	cmd.Env = append(os.Environ(), "PGTEST_WATCHDOG_CHILD=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var pid int
	var dir string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if _, err := fmt.Sscanf(sc.Text(), "CHILD %d %s", &pid, &dir); err == nil {
			break
		}
	}
	if pid == 0 {
		t.Fatalf("child reported no server (scan err %v)", sc.Err())
	}
	cmd.Process.Kill()
	_ = cmd.Wait() // killed: its error is the signal

	deadline := time.Now().Add(20 * time.Second)
	for ; time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		_, statErr := os.Stat(dir)
		if !running(pid) && os.IsNotExist(statErr) {
			return
		}
	}
	t.Fatalf("after SIGKILL of the test binary, server pid %d running=%v, dir %s still there", pid, running(pid), dir)
}

// running reports whether pid is a live, non-zombie process.
func running(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	return err != nil || !strings.Contains(string(b), "State:\tZ")
}

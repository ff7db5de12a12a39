package pgembed

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// reachableDir returns a fresh folder the server's OS user can enter even
// when tests run as root (t.TempDir is mode 700 and root-owned).
func reachableDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "pgembed-test-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}

// startCluster starts a throwaway cluster (no flushing to disk, see
// Config.Throwaway) and makes sure the test stops it. A DataDir without a
// cluster gets a copy of the golden one instead of running initdb.
func startCluster(t testing.TB, cfg Config) *Cluster {
	t.Helper()
	cfg.Throwaway = true
	seedCluster(t, cfg.DataDir)
	return startDurableCluster(t, cfg)
}

// golden is a cluster made by initdb once per test binary. Tests that do
// not test initdb start from a copy: cp -a keeps owners and modes, and
// costs a fraction of initdb, which dominated this package's run time.
var golden struct {
	once sync.Once
	dir  string // holds data/
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if golden.dir != "" {
		os.RemoveAll(filepath.Dir(golden.dir))
	}
	os.Exit(code)
}

// seedCluster puts a copy of the golden cluster in dataDir/data, unless
// dataDir already holds one.
func seedCluster(t testing.TB, dataDir string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dataDir, "data")); err == nil {
		return
	}
	golden.once.Do(func() { golden.dir, golden.err = makeGolden() })
	if golden.err != nil {
		t.Fatalf("golden cluster: %v", golden.err)
	}
	ctx := context.Background()
	run, err := newRunner("", testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	root, err := prepareRoot(ctx, run, dataDir)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-a", filepath.Join(golden.dir, "data"), root).CombinedOutput(); err != nil {
		t.Fatalf("copy golden cluster: %v: %s", err, out)
	}
}

func makeGolden() (string, error) {
	base, err := os.MkdirTemp("", "pgembed-golden-")
	if err != nil {
		return "", err
	}
	if err := os.Chmod(base, 0o755); err != nil {
		return "", err
	}
	ctx := context.Background()
	run, err := newRunner("", slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		return "", err
	}
	root, err := prepareRoot(ctx, run, filepath.Join(base, "c"))
	if err != nil {
		return "", err
	}
	l, err := planLayout(ctx, run, root)
	if err != nil {
		return "", err
	}
	bin, err := FindBinDir()
	if err != nil {
		return "", err
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	return root, ensureInitialized(ctx, run, bin, l, true, quiet)
}

func connect(t testing.TB, connString string) *pgx.Conn {
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

func queryString(t testing.TB, conn *pgx.Conn, sql string) string {
	t.Helper()
	var s string
	if err := conn.QueryRow(context.Background(), sql).Scan(&s); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return s
}

// connect1 tries one connection and closes it; for checking a server is down.
func connect1(connString string) (struct{}, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, connString)
	if err != nil {
		return struct{}{}, err
	}
	return struct{}{}, conn.Close(ctx)
}

// startDurableCluster starts a cluster with the production defaults
// (flushing to disk), for the tests that check them.
func startDurableCluster(t testing.TB, cfg Config) *Cluster {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = testLogger(t)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := Start(ctx, cfg)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Stop(context.Background()); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return c
}

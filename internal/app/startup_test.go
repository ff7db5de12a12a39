package app

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/internal/config"
	"github.com/lethe-mq/lethe/internal/pgembed"
	"github.com/lethe-mq/lethe/internal/testkit"
)

// syncBuffer collects logs written by Start's goroutines.
type syncBuffer = testkit.SyncBuffer

// reachableDir is a fresh folder the embedded server's OS user can enter when the
// tests run as root (t.TempDir's parent is private to root).
func reachableDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "lethe-app-test-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// tcpCluster starts a throwaway PostgreSQL with a TCP listener (and so a
// password) on port (0: any free one).
func tcpCluster(t *testing.T, dir string, port int) *pgembed.Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := pgembed.Start(ctx, pgembed.Config{DataDir: dir, ListenAddress: "127.0.0.1", Port: port,
		Throwaway: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Stop(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return c
}

func testConfig(t *testing.T, dsn string, wait time.Duration) config.Server {
	t.Helper()
	cfg, err := config.FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	cfg.DatabaseURL, cfg.DatabaseWait, cfg.PoolSize = dsn, wait, 4
	cfg.Retention.Enabled = false
	cfg.DataDir = t.TempDir()
	return cfg
}

func startApp(t *testing.T, cfg config.Server, log *slog.Logger) (*App, error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	a, err := Start(context.Background(), cfg, log, Options{Listener: ln})
	if err == nil {
		t.Cleanup(func() { a.Stop(context.Background()) })
	}
	return a, err
}

// Every way a first connection commonly fails is one line naming the
// cause and what to do, without the password; only what waiting can fix
// is retried.
func TestDatabaseErrorsAreOneLineWithAdvice(t *testing.T) {
	t.Parallel()
	c := tcpCluster(t, filepath.Join(reachableDir(t), "pg"), 0)
	good, err := url.Parse(c.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	password, _ := good.User.Password()
	variant := func(f func(u *url.URL)) string {
		u := *good
		f(&u)
		return u.String()
	}
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedPort := closed.Addr().(*net.TCPAddr).Port
	closed.Close()

	for _, tc := range []struct {
		name string
		dsn  string
		want []string
	}{
		{"wrong password", variant(func(u *url.URL) { u.User = url.UserPassword("postgres", "wrong") }),
			[]string{"password authentication failed", "check the user and password"}},
		{"no such database", variant(func(u *url.URL) { u.Path = "/nope" }),
			[]string{`database "nope" does not exist`, "createdb"}},
		{"TLS refused", variant(func(u *url.URL) { u.RawQuery = "sslmode=require" }),
			[]string{"does not offer TLS", "sslmode=disable"}},
		{"connection refused", variant(func(u *url.URL) { u.Host = "127.0.0.1:" + strconv.Itoa(closedPort) }),
			[]string{"connection refused", "retried for 1s", "is PostgreSQL running"}},
	} {
		_, err := startApp(t, testConfig(t, tc.dsn, time.Second), nil)
		if err == nil {
			t.Errorf("%s: Start succeeded", tc.name)
			continue
		}
		msg := err.Error()
		t.Logf("%s: %s", tc.name, msg)
		for _, want := range tc.want {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: error %q lacks %q", tc.name, msg, want)
			}
		}
		if strings.Contains(msg, "\n") || strings.Contains(msg, password) {
			t.Errorf("%s: error %q is not one line, or shows the password", tc.name, msg)
		}
		if tc.name != "connection refused" && strings.Contains(msg, "retried") {
			t.Errorf("%s: error %q: retried what waiting cannot fix", tc.name, msg)
		}
	}
}

// A database that comes up after lethe does is waited for, and said so.
func TestStartWaitsForDatabase(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(reachableDir(t), "pg")
	c := tcpCluster(t, dir, 0)
	port, dsn := c.Port(), c.URL("postgres")
	if err := c.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	started := make(chan error, 1)
	go func() {
		_, err := startApp(t, testConfig(t, dsn, 2*time.Minute), log)
		started <- err
	}()
	for deadline := time.Now().Add(time.Minute); !strings.Contains(logs.String(), "PostgreSQL not reachable yet; retrying"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no retry announced; logs:\n%s", logs.String())
		}
	}
	tcpCluster(t, dir, port)
	select {
	case err := <-started:
		if err != nil {
			t.Fatalf("Start after the database came up: %v", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("Start did not return after the database came up")
	}
}

// A busy HTTP port is found before the embedded cluster is made.
func TestBusyPortFailsBeforeEmbeddedStart(t *testing.T) {
	t.Parallel()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	cfg := testConfig(t, "", time.Second)
	cfg.Host, cfg.Port = "127.0.0.1", busy.Addr().(*net.TCPAddr).Port
	cfg.DataDir = filepath.Join(reachableDir(t), "data")
	_, err = Start(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), Options{})
	if err == nil || !strings.Contains(err.Error(), "listen on") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("Start on a busy port: %v; want one line about the port", err)
	}
	if _, err := os.Stat(cfg.DataDir); !os.IsNotExist(err) {
		t.Fatalf("data folder made before the port was checked (stat: %v)", err)
	}
}

// Without credentials a replica refuses to listen off loopback, before it
// touches a database, and says what to set.
func TestNoCredentialsRefusesToListenOffLoopback(t *testing.T) {
	t.Parallel()
	cfg := config.Server{Host: "0.0.0.0", Port: 0, DatabaseURL: "postgres://nobody@127.0.0.1:1/none"}
	_, err := Start(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), Options{})
	if err == nil || !strings.Contains(err.Error(), "LETHE_AUTH=none") || !strings.Contains(err.Error(), "LETHE_OPERATOR_TOKEN") {
		t.Fatalf("Start on 0.0.0.0 without credentials: %v, want a refusal naming what to set", err)
	}
	// With LETHE_AUTH=none the same address is accepted (and fails later,
	// at the database, which does not exist).
	cfg.AuthNone = true
	_, err = Start(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), Options{})
	if err == nil || strings.Contains(err.Error(), "LETHE_AUTH=none") {
		t.Fatalf("Start on 0.0.0.0 with LETHE_AUTH=none: %v, want it past the exposure check", err)
	}
}

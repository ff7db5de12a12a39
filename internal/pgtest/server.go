package pgtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lethe-mq/lethe/internal/pgembed"
)

// EnvURL names the variable that points tests at an existing server.
const EnvURL = "LETHE_TEST_DATABASE_URL"

// startTimeout bounds initdb plus server start.
const startTimeout = 2 * time.Minute

// server is the database server shared by one test binary.
type server struct {
	admin   string           // connection string to the postgres database
	pool    *pgxpool.Pool    // admin connections for CREATE/DROP DATABASE
	cluster *pgembed.Cluster // nil when EnvURL is used
	tmpDir  string           // private cluster's folder, removed at exit

	templateOnce sync.Once
	template     string // migrated database every NewDatabase copies
	templateErr  error
}

var (
	mainCalled bool // set by Main before any test runs; read-only afterwards

	mu     sync.Mutex
	shared *server
	failed error // a failed start is not retried: every test reports it
)

// Main runs the package's tests with a shared server, then stops and
// removes it and exits with the tests' status. The server starts lazily,
// on the first NewDatabase or AdminConnString.
func Main(m *testing.M) {
	mainCalled = true
	code := m.Run()
	if err := shutdown(); err != nil {
		fmt.Fprintln(os.Stderr, "pgtest:", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// get returns the shared server, starting it on first use.
func get() (*server, error) {
	if !mainCalled {
		return nil, fmt.Errorf("pgtest: Main was not called; add func TestMain(m *testing.M) { pgtest.Main(m) } to the package's tests")
	}
	mu.Lock()
	defer mu.Unlock()
	if shared == nil && failed == nil {
		shared, failed = start()
	}
	return shared, failed
}

func start() (*server, error) {
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if url := os.Getenv(EnvURL); url != "" {
		return connect(ctx, &server{admin: url})
	}
	dir, err := os.MkdirTemp("", "lethe-pgtest-")
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	s := &server{tmpDir: dir}
	// Quiet: test output should be about tests. Failures come back as errors.
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	// Throwaway: nothing flushed to disk. A test may crash the server,
	// never the machine, and flushing was most of a start's cost.
	s.cluster, err = pgembed.Start(ctx, pgembed.Config{DataDir: dir, Logger: quiet, Throwaway: true})
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("pgtest: cannot start a private PostgreSQL (or set %s to use an existing server): %w", EnvURL, err)
	}
	if err := startWatchdog(s.cluster, dir); err != nil {
		fmt.Fprintln(os.Stderr, "pgtest: warning: server may outlive a killed test binary:", err)
	}
	s.admin = s.cluster.ConnString("postgres")
	return connect(ctx, s)
}

func connect(ctx context.Context, s *server) (*server, error) {
	pool, err := pgxpool.New(ctx, s.admin)
	if err == nil {
		err = pool.Ping(ctx)
	}
	if err != nil {
		err = fmt.Errorf("pgtest: connect to admin database: %w", err)
		if closeErr := s.close(); closeErr != nil {
			err = errors.Join(err, closeErr)
		}
		return nil, err
	}
	s.pool = pool
	return s, nil
}

// shutdown stops the private server and deletes its files.
func shutdown() error {
	mu.Lock()
	defer mu.Unlock()
	if shared == nil {
		return nil
	}
	err := shared.close()
	shared = nil
	return err
}

func (s *server) close() error {
	if s.pool != nil {
		if s.cluster == nil {
			s.dropTemplate() // a shared server outlives us
		}
		s.pool.Close()
	}
	if s.cluster == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := s.cluster.Stop(ctx) // if it fails, the watchdog still tries at exit
	os.RemoveAll(s.tmpDir)
	return err
}

// AdminConnString returns a connection string to the shared server's
// postgres database, for tests that manage databases or roles themselves.
// It panics if the server cannot be started, as there is no test to fail.
func AdminConnString() string {
	s, err := get()
	if err != nil {
		panic(err)
	}
	return s.admin
}

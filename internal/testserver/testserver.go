// Package testserver starts a real lethe replica for a test: its own fresh
// database on the shared test cluster (pgtest), a loopback listener and an
// injectable clock. Tests talk to it over real HTTP.
package testserver

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/internal/app"
	"github.com/lethe-mq/lethe/internal/clock"
	"github.com/lethe-mq/lethe/internal/config"
	"github.com/lethe-mq/lethe/internal/pgtest"
)

// Options adjust the replica.
type Options struct {
	// Clock defaults to the real clock; pass a clock.Fake to move time
	// instead of sleeping.
	Clock clock.Clock
	// Config is applied to the default configuration before start.
	Config func(*config.Server)
	// DatabaseURL reuses an existing test database (for several replicas
	// on one database); empty creates a fresh one.
	DatabaseURL string
}

// Server is a running replica.
type Server struct {
	*app.App
	URL         string
	DatabaseURL string
}

// Start starts a replica and stops it when the test ends. The package's
// TestMain must call pgtest.Main.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	dsn := opts.DatabaseURL
	if dsn == "" {
		dsn = pgtest.NewDatabase(t)
	}
	cfg, err := config.FromEnv()
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	cfg.DatabaseURL = dsn
	cfg.PoolSize = 10
	cfg.Retention.Enabled = false
	if opts.Config != nil {
		opts.Config(&cfg)
	}
	clk := opts.Clock
	if clk == nil {
		clk = clock.Real{}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if os.Getenv("LETHE_TEST_LOG") != "" {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	a, err := app.Start(ctx, cfg, log, app.Options{Clock: clk, Listener: ln})
	if err != nil {
		t.Fatalf("start lethe: %v", err)
	}
	t.Cleanup(func() { a.Stop(context.Background()) })
	return &Server{App: a, URL: a.URL(), DatabaseURL: dsn}
}

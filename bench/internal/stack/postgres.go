// Package stack starts what the benchmark measures, all on loopback: a
// private PostgreSQL, a lethe server (a subprocess by default, so its memory
// is its own) and nats-server.
package stack

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/internal/pgembed"
)

// Postgres is the private cluster every Postgres-backed system shares, so
// the ceiling, lethe and River are measured on the same server.
type Postgres struct {
	cluster *pgembed.Cluster
	dsn     string // given by the caller instead of a private cluster
	dir     string
}

// StartPostgres starts a private cluster in a fresh folder under tmpDir.
// It runs with lethe's embedded settings (internal/pgembed: fsync on, a
// queue's WAL and autovacuum settings), allowing enough connections for
// 64 clients plus lethe's pool.
func StartPostgres(ctx context.Context, tmpDir string) (*Postgres, error) {
	return StartPostgresWith(ctx, tmpDir, nil)
}

// StartPostgresWith is StartPostgres with extra server settings (-profile
// loads pg_stat_statements).
func StartPostgresWith(ctx context.Context, tmpDir string, extra map[string]string) (*Postgres, error) {
	dir, err := os.MkdirTemp(tmpDir, "pg-")
	if err != nil {
		return nil, err
	}
	// As root the server runs as the postgres OS user, which must be able
	// to enter the run's temp folder (MkdirTemp makes it 0700).
	if err := os.Chmod(tmpDir, 0o711); err != nil {
		return nil, err
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	settings := map[string]string{"max_connections": "300"}
	maps.Copy(settings, extra)
	c, err := pgembed.Start(ctx, pgembed.Config{DataDir: dir, Logger: quiet, Settings: settings})
	if err != nil {
		return nil, fmt.Errorf("start the private PostgreSQL: %w", err)
	}
	return &Postgres{cluster: c, dir: dir}, nil
}

// UsePostgres uses an existing server (admin connection string to its
// "postgres" database or any database the bench may create others from).
func UsePostgres(dsn string) *Postgres { return &Postgres{dsn: dsn} }

// DSN is a connection string to database db.
func (p *Postgres) DSN(db string) string {
	if p.cluster != nil {
		return p.cluster.ConnString(db)
	}
	cfg, err := pgx.ParseConfig(p.dsn)
	if err != nil {
		return p.dsn
	}
	return fmt.Sprintf("host=%s port=%d user=%s password=%s dbname=%s sslmode=disable",
		cfg.Host, cfg.Port, cfg.User, cfg.Password, db)
}

// EnsureDatabase creates db if it does not exist.
func (p *Postgres) EnsureDatabase(ctx context.Context, db string) error {
	conn, err := pgx.Connect(ctx, p.DSN("postgres"))
	if err != nil {
		return fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, db).Scan(&exists); err != nil {
		return fmt.Errorf("look up database %s: %w", db, err)
	}
	if exists {
		return nil
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{db}.Sanitize()); err != nil {
		return fmt.Errorf("create database %s: %w", db, err)
	}
	return nil
}

// Version reports the server's version string.
func (p *Postgres) Version(ctx context.Context) string {
	conn, err := pgx.Connect(ctx, p.DSN("postgres"))
	if err != nil {
		return "unknown"
	}
	defer conn.Close(ctx)
	var v string
	if err := conn.QueryRow(ctx, `SHOW server_version`).Scan(&v); err != nil {
		return "unknown"
	}
	return v
}

// settingsShown are the settings a run's report names: the ones lethe's
// embedded PostgreSQL changes, and fsync.
var settingsShown = []string{"fsync", "max_wal_size", "min_wal_size", "checkpoint_timeout", "wal_compression", "autovacuum_naptime"}

// Settings names the server's values of settingsShown ("fsync on,
// max_wal_size 256MB, ..."); private servers run with lethe's embedded
// settings (internal/pgembed).
func (p *Postgres) Settings(ctx context.Context) string {
	conn, err := pgx.Connect(ctx, p.DSN("postgres"))
	if err != nil {
		return "settings unknown"
	}
	defer conn.Close(ctx)
	var out []string
	for _, name := range settingsShown {
		var v string
		if err := conn.QueryRow(ctx, `SELECT current_setting($1)`, name).Scan(&v); err == nil {
			out = append(out, name+" "+v)
		}
	}
	return strings.Join(out, ", ")
}

// Checkpoint flushes dirty pages so a scenario does not pay for the
// previous one's writes.
func (p *Postgres) Checkpoint(ctx context.Context) error {
	conn, err := pgx.Connect(ctx, p.DSN("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, `CHECKPOINT`)
	return err
}

// Stop stops a private cluster and removes its folder.
func (p *Postgres) Stop(ctx context.Context) error {
	if p.cluster == nil {
		return nil
	}
	err := p.cluster.Stop(ctx)
	if err == nil {
		os.RemoveAll(p.cluster.Dir())
		os.RemoveAll(p.dir)
	}
	return err
}

// LogPath is the private server's log, for error messages.
func (p *Postgres) LogPath() string {
	if p.cluster == nil {
		return ""
	}
	return p.cluster.LogPath()
}

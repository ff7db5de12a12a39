package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lethe-mq/lethe/internal/pgembed"
	"github.com/lethe-mq/lethe/internal/pguuid"
	"github.com/lethe-mq/lethe/internal/schema"
	"github.com/lethe-mq/lethe/internal/slowstep"
)

// openDatabase gives the replica its pool: the embedded cluster when no
// DATABASE_URL is set, a connection retried for DatabaseWait, and the
// migrations.
func (a *App) openDatabase(ctx context.Context) error {
	dsn := a.Config.DatabaseURL
	if dsn == "" {
		var err error
		if dsn, err = a.startEmbedded(ctx); err != nil {
			return err
		}
	}
	pcfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return fmt.Errorf("DATABASE_URL: %w", err) // pgx leaves the password out
	}
	pcfg.MaxConns = int32(a.Config.PoolSize)
	pcfg.AfterConnect = pguuid.AfterConnect
	if a.Pool, err = pgxpool.NewWithConfig(ctx, pcfg); err != nil {
		return fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	if err := waitForDatabase(ctx, a.Pool, a.Config.DatabaseWait, a.Log); err != nil {
		return err
	}
	step := slowstep.Begin(a.Log, "applying schema migrations", slowstep.After)
	applied, err := schema.Migrate(ctx, a.Pool)
	step.End()
	if err != nil {
		return err
	}
	if len(applied) > 0 {
		a.Log.Info("schema migrated", "versions", applied)
	}
	return nil
}

// startEmbedded starts the private cluster in DataDir and returns a
// connection string to it.
func (a *App) startEmbedded(ctx context.Context) (string, error) {
	cfg := a.Config
	dataDir, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return "", err
	}
	pc := pgembed.Config{DataDir: dataDir, Logger: a.Log, BinDir: cfg.PGBinDir, OSUser: cfg.PGOSUser}
	if cfg.PGListen != "" {
		host, port, _ := net.SplitHostPort(cfg.PGListen) // checked by config.Validate
		pc.ListenAddress = host
		pc.Port, _ = strconv.Atoi(port)
	}
	a.Log.Info("no DATABASE_URL set: starting an embedded PostgreSQL", "data_dir", dataDir)
	a.cluster, err = pgembed.Start(ctx, pc)
	var inUse *pgembed.InUseError
	switch {
	case errors.As(err, &inUse):
		return "", fmt.Errorf("LETHE_DATA_DIR %s is in use by another lethe (pid %d): stop it, or set LETHE_DATA_DIR to another folder",
			inUse.Dir, inUse.PID)
	case err != nil:
		return "", fmt.Errorf("embedded PostgreSQL: %w", err)
	}
	if cfg.PGListen != "" {
		a.Log.Info("embedded PostgreSQL listens on TCP; password in "+filepath.Join(dataDir, "postgres.password"),
			"url", redactURL(a.cluster.URL("postgres")))
	}
	return a.cluster.ConnString("postgres"), nil
}

// connectAttemptTimeout bounds one connection attempt, so a host that
// drops packets costs a retry, not the whole wait.
const connectAttemptTimeout = 10 * time.Second

// waitForDatabase pings until the database answers, for at most wait.
// A problem waiting cannot fix (wrong password, no such database, TLS
// refused) ends it at once. Either way the error is one line: the cause
// and what to do.
func waitForDatabase(ctx context.Context, pool *pgxpool.Pool, wait time.Duration, log *slog.Logger) error {
	where := describe(pool.Config().ConnConfig.Config)
	step := slowstep.Begin(log, "connecting to PostgreSQL", slowstep.After, "at", where)
	defer step.End()
	deadline := time.Now().Add(wait)
	pause := 250 * time.Millisecond
	for attempt := 1; ; attempt++ {
		pingCtx, cancel := context.WithTimeout(ctx, connectAttemptTimeout)
		err := pool.Ping(pingCtx)
		cancel()
		if err == nil {
			return nil
		}
		p := diagnose(err)
		if !p.retry || ctx.Err() != nil || time.Now().Add(pause).After(deadline) {
			return dbError(where, p, attempt, wait)
		}
		if attempt == 1 {
			log.Warn("PostgreSQL not reachable yet; retrying", "at", where, "cause", p.cause,
				"for_up_to", wait.String())
		}
		select {
		case <-ctx.Done():
			return dbError(where, p, attempt, wait)
		case <-time.After(pause):
		}
		pause = min(2*pause, 5*time.Second)
	}
}

func dbError(where string, p dbProblem, attempts int, wait time.Duration) error {
	tried := ""
	if attempts > 1 {
		tried = fmt.Sprintf(" (retried for %s; DATABASE_WAIT_SECONDS sets how long)", wait)
	}
	return fmt.Errorf("cannot connect to PostgreSQL at %s: %s%s; %s", where, p.cause, tried, p.advice)
}

// describe names a database for messages, without the password:
// user@host:port/dbname (host is the socket folder for Unix sockets).
func describe(c pgconn.Config) string {
	return fmt.Sprintf("%s@%s/%s", c.User, net.JoinHostPort(c.Host, strconv.Itoa(int(c.Port))), c.Database)
}

// redactURL hides the password of a postgres:// URL for logs.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable)"
	}
	return u.Redacted()
}

package pgtest

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lethe-mq/lethe/internal/schema"
)

// migrateTimeout bounds migrating the template, once per test binary.
const migrateTimeout = 2 * time.Minute

// migratedTemplate returns the database every NewDatabase copies: lethe's
// schema migrated once per test binary, so a test pays for a copy, not
// for the migrations.
func (s *server) migratedTemplate() (string, error) {
	s.templateOnce.Do(func() { s.template, s.templateErr = s.makeTemplate() })
	return s.template, s.templateErr
}

func (s *server) makeTemplate() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), migrateTimeout)
	defer cancel()
	name := databaseName("template")
	ident := pgx.Identifier{name}.Sanitize()
	if _, err := s.pool.Exec(ctx, "CREATE DATABASE "+ident+" TEMPLATE template0"); err != nil {
		return "", fmt.Errorf("pgtest: create template database: %w", err)
	}
	pool, err := pgxpool.New(ctx, s.connString(name))
	if err != nil {
		return "", fmt.Errorf("pgtest: connect to template database: %w", err)
	}
	_, err = schema.Migrate(ctx, pool)
	pool.Close() // a template must have no sessions to be copied
	if err != nil {
		return "", fmt.Errorf("pgtest: migrate template database: %w", err)
	}
	// Nobody may connect to it again: a session, even an idle one, would
	// make every copy fail with "source database is being accessed".
	if _, err := s.pool.Exec(ctx, "ALTER DATABASE "+ident+" ALLOW_CONNECTIONS false"); err != nil {
		return "", fmt.Errorf("pgtest: seal template database: %w", err)
	}
	return name, nil
}

// dropTemplate removes the template from a server shared with others
// (EnvURL); a private server goes away whole.
func (s *server) dropTemplate() {
	if s.template == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), ddlTimeout)
	defer cancel()
	_, _ = s.pool.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{s.template}.Sanitize())
}

package pgtest

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// CreateDatabase is NewDatabase for code that has no testing.TB, such as
// the servers behind Example functions. label names the database's purpose.
// The caller drops it with drop; the shared server and everything on it go
// away when Main returns anyway.
func CreateDatabase(label string) (dsn string, drop func() error, err error) {
	s, err := get()
	if err != nil {
		return "", nil, err
	}
	name := databaseName(label)
	ident := pgx.Identifier{name}.Sanitize()
	ctx, cancel := context.WithTimeout(context.Background(), ddlTimeout)
	defer cancel()
	if _, err := s.pool.Exec(ctx, "CREATE DATABASE "+ident+" TEMPLATE template0"); err != nil {
		return "", nil, fmt.Errorf("pgtest: create database %s: %w", name, err)
	}
	drop = func() error {
		ctx, cancel := context.WithTimeout(context.Background(), ddlTimeout)
		defer cancel()
		if _, err := s.pool.Exec(ctx, "DROP DATABASE IF EXISTS "+ident+" WITH (FORCE)"); err != nil {
			return fmt.Errorf("pgtest: drop database %s: %w", name, err)
		}
		return nil
	}
	return s.connString(name), drop, nil
}

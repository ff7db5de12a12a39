// Package schematest replays, for tests, the migration chain the schema
// baseline replaced (internal/schema/testdata/legacy): a database as a
// release that carried the chain left it, to test its adoption and the
// data the chain's steps carried over.
package schematest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lethe-mq/lethe/internal/schema"
)

// LegacyDir is the folder of the replaced chain's files.
func LegacyDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata", "legacy")
}

// Legacy reads the replaced chain's migrations, in order.
func Legacy() ([]schema.Migration, error) {
	paths, err := filepath.Glob(filepath.Join(LegacyDir(), "*.up.sql"))
	if err != nil {
		return nil, err
	}
	var out []schema.Migration
	for _, p := range paths {
		base := strings.TrimSuffix(filepath.Base(p), ".up.sql")
		num, name, _ := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if err != nil {
			return nil, fmt.Errorf("legacy migration %s: %w", p, err)
		}
		body, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		out = append(out, schema.Migration{Version: v, Name: name, SQL: string(body)})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no legacy migrations in %s", LegacyDir())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out, nil
}

// ApplyLegacy applies, in order, the chain's migrations apply selects that
// the database has not recorded, each in its transaction with its row in
// lethe.schema_migrations, as a release carrying the chain did. It creates
// schema lethe and its migrations table when missing.
func ApplyLegacy(ctx context.Context, pool *pgxpool.Pool, apply func(version int) bool) error {
	migs, err := Legacy()
	if err != nil {
		return err
	}
	if _, err := pool.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS lethe; REVOKE ALL ON SCHEMA lethe FROM PUBLIC;
		CREATE TABLE IF NOT EXISTS lethe.schema_migrations (
		version int PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return err
	}
	for _, m := range migs {
		if !apply(m.Version) {
			continue
		}
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			var done bool
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM lethe.schema_migrations WHERE version = $1)`,
				m.Version).Scan(&done); err != nil || done {
				return err
			}
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO lethe.schema_migrations (version, name) VALUES ($1, $2)`, m.Version, m.Name)
			return err
		})
		if err != nil {
			return fmt.Errorf("legacy migration %03d_%s: %w", m.Version, m.Name, err)
		}
	}
	return nil
}

// All selects every migration of the chain.
func All(int) bool { return true }

// Package schema owns lethe's tables. Migrations are numbered SQL files
// embedded in the binary and applied at start under an advisory lock, so
// several replicas starting at once apply each exactly once; the stored
// functions, views and triggers (functions/*.sql) are applied after them,
// under the same lock, whenever their checksum is not recorded yet.
package schema

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed migrations/*.up.sql
var migrationFS embed.FS

// migrateLockID is the advisory lock that serializes migrations across
// replicas. The retention loop uses another one.
const migrateLockID = 737000

// Migration is one numbered step.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// Migrations lists the embedded migrations in order.
func Migrations() ([]Migration, error) {
	entries, err := fs.Glob(migrationFS, "migrations/*.up.sql")
	if err != nil {
		return nil, err
	}
	var out []Migration
	for _, path := range entries {
		base := strings.TrimSuffix(strings.TrimPrefix(path, "migrations/"), ".up.sql")
		num, name, ok := strings.Cut(base, "_")
		if !ok {
			return nil, fmt.Errorf("migration %s: name must be NNN_name.up.sql", path)
		}
		v, err := strconv.Atoi(num)
		if err != nil {
			return nil, fmt.Errorf("migration %s: %w", path, err)
		}
		body, err := migrationFS.ReadFile(path)
		if err != nil {
			return nil, err
		}
		out = append(out, Migration{Version: v, Name: name, SQL: string(body)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out, nil
}

// Migrate brings the lethe schema up to date. It returns the versions it
// applied (none when the schema was current), the baseline included when
// it adopted a database of the replaced chain (legacy.go); the function
// files are applied after them when their checksum is new.
//
// It needs no right on the database once schema lethe exists: a role that
// owns only that schema can start lethe (docs/operations.md lists the
// grants).
func Migrate(ctx context.Context, pool *pgxpool.Pool) ([]int, error) {
	migs, err := Migrations()
	if err != nil {
		return nil, err
	}
	funcs, err := LoadFunctions()
	if err != nil {
		return nil, err
	}
	return migrate(ctx, pool, migs, funcs)
}

func migrate(ctx context.Context, pool *pgxpool.Pool, migs []Migration, funcs Functions) ([]int, error) {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	defer conn.Release()
	// A session lock, released explicitly below and by the server if the
	// connection dies, so a crashed replica cannot block the others.
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", migrateLockID); err != nil {
		return nil, fmt.Errorf("migrate: take lock: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", migrateLockID) //nolint:errcheck

	if err := bootstrap(ctx, conn.Conn()); err != nil {
		return nil, err
	}
	applied, err := appliedVersions(ctx, conn.Conn())
	if err != nil {
		return nil, err
	}
	adopted, err := adoptLegacy(ctx, conn.Conn(), applied)
	if err != nil {
		return nil, err
	}
	var done []int
	if adopted {
		done = append(done, baselineVersion)
	}
	if err := bootstrapRepeatables(ctx, conn.Conn()); err != nil {
		return done, err
	}
	for _, m := range migs {
		if applied[m.Version] {
			continue
		}
		if err := apply(ctx, conn.Conn(), m); err != nil {
			return done, err
		}
		done = append(done, m.Version)
	}
	if _, err := applyFunctions(ctx, conn.Conn(), funcs); err != nil {
		return done, err
	}
	return done, nil
}

// bootstrap creates schema lethe and its migrations table, each only when
// missing: CREATE SCHEMA needs CREATE on the database even with IF NOT
// EXISTS, and a role that owns only the schema has no such right.
func bootstrap(ctx context.Context, conn *pgx.Conn) error {
	var schemaExists, tableExists bool
	err := conn.QueryRow(ctx, `SELECT to_regnamespace('lethe') IS NOT NULL,
		to_regclass('lethe.schema_migrations') IS NOT NULL`).Scan(&schemaExists, &tableExists)
	if err != nil {
		return fmt.Errorf("migrate: look for schema lethe: %w", err)
	}
	if !schemaExists {
		if _, err := conn.Exec(ctx, "CREATE SCHEMA lethe; REVOKE ALL ON SCHEMA lethe FROM PUBLIC"); err != nil {
			return fmt.Errorf("migrate: create schema lethe: %w%s", err, privilegeHint(ctx, conn, err))
		}
	}
	if tableExists {
		return nil
	}
	if _, err := conn.Exec(ctx, `CREATE TABLE lethe.schema_migrations (
			version    int PRIMARY KEY,
			name       text NOT NULL,
			applied_at timestamptz NOT NULL DEFAULT now()
		)`); err != nil {
		return fmt.Errorf("migrate: create lethe.schema_migrations: %w%s", err, privilegeHint(ctx, conn, err))
	}
	return nil
}

// bootstrapRepeatables creates lethe.schema_repeatables when missing.
func bootstrapRepeatables(ctx context.Context, conn *pgx.Conn) error {
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT to_regclass('lethe.schema_repeatables') IS NOT NULL`).Scan(&exists); err != nil {
		return fmt.Errorf("migrate: look for lethe.schema_repeatables: %w", err)
	}
	if exists {
		return nil
	}
	if _, err := conn.Exec(ctx, createRepeatablesTable); err != nil {
		return fmt.Errorf("migrate: create lethe.schema_repeatables: %w%s", err, privilegeHint(ctx, conn, err))
	}
	return nil
}

func appliedVersions(ctx context.Context, conn *pgx.Conn) (map[int]bool, error) {
	rows, err := conn.Query(ctx, "SELECT version FROM lethe.schema_migrations")
	if err != nil {
		return nil, fmt.Errorf("migrate: read versions: %w", err)
	}
	versions, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		return nil, fmt.Errorf("migrate: read versions: %w", err)
	}
	applied := make(map[int]bool, len(versions))
	for _, v := range versions {
		applied[v] = true
	}
	return applied, nil
}

// apply runs one migration and records it in the same transaction.
func apply(ctx context.Context, conn *pgx.Conn, m Migration) error {
	err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, m.SQL); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "INSERT INTO lethe.schema_migrations (version, name) VALUES ($1, $2)", m.Version, m.Name)
		return err
	})
	if err != nil {
		return fmt.Errorf("migrate: apply %03d_%s: %w%s", m.Version, m.Name, err, privilegeHint(ctx, conn, err))
	}
	return nil
}

// privilegeHint turns "permission denied" into what a superuser should
// run; other errors get no hint.
func privilegeHint(ctx context.Context, conn *pgx.Conn, err error) string {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "42501" {
		return ""
	}
	var role, db string
	if conn.QueryRow(ctx, "SELECT current_user, current_database()").Scan(&role, &db) != nil {
		return ""
	}
	r := pgx.Identifier{role}.Sanitize()
	return fmt.Sprintf("; role %s must own schema lethe: as a superuser run "+
		"CREATE SCHEMA lethe AUTHORIZATION %s (or ALTER SCHEMA lethe OWNER TO %s) in database %s", role, r, r, db)
}

package schema

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"sort"

	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/internal/version"
)

// Stored functions, views and triggers are code: one file per concern,
// each object defined once with CREATE OR REPLACE, applied whole after the
// numbered migrations whenever their checksum is not recorded yet.
//
//go:embed functions/*.sql
var functionsFS embed.FS

// Functions is the set of repeatable files: their concatenation in name
// order and its sha256.
type Functions struct {
	Files    []string
	SQL      string
	Checksum string
}

// LoadFunctions reads the embedded function files.
func LoadFunctions() (Functions, error) { return loadFunctions(functionsFS) }

func loadFunctions(fsys fs.FS) (Functions, error) {
	var f Functions
	paths, err := fs.Glob(fsys, "functions/*.sql")
	if err != nil {
		return f, err
	}
	if len(paths) == 0 {
		return f, fmt.Errorf("migrate: no function files")
	}
	sort.Strings(paths)
	sum := sha256.New()
	var sql []byte
	for _, p := range paths {
		body, err := fs.ReadFile(fsys, p)
		if err != nil {
			return f, err
		}
		sum.Write(body)
		sql = append(sql, body...)
		sql = append(sql, '\n')
		f.Files = append(f.Files, p)
	}
	f.SQL = string(sql)
	f.Checksum = hex.EncodeToString(sum.Sum(nil))
	return f, nil
}

// createRepeatablesTable records every application of the function files:
// their checksum and the lethe that applied them.
const createRepeatablesTable = `CREATE TABLE lethe.schema_repeatables (
	id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	checksum   text NOT NULL,
	lethe      text NOT NULL,
	applied_at timestamptz NOT NULL DEFAULT now()
)`

// applyFunctions runs the function files in one transaction and records
// their checksum, unless that checksum is recorded already. A checksum
// recorded by any earlier start counts: a replica of a previous version
// restarting during a rolling upgrade must not put its definitions back
// over a newer one's (a function keeps its signature and meaning while a
// previous version may call it, so the newer definitions serve it too).
// It reports whether it applied them.
func applyFunctions(ctx context.Context, conn *pgx.Conn, f Functions) (bool, error) {
	var recorded bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM lethe.schema_repeatables WHERE checksum = $1)`,
		f.Checksum).Scan(&recorded); err != nil {
		return false, fmt.Errorf("migrate: read function checksums: %w", err)
	}
	if recorded {
		return false, nil
	}
	err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		// Bodies refer to each other; they are checked when called.
		if _, err := tx.Exec(ctx, "SET LOCAL check_function_bodies = off"); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, f.SQL); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "INSERT INTO lethe.schema_repeatables (checksum, lethe) VALUES ($1, $2)",
			f.Checksum, version.String())
		return err
	})
	if err != nil {
		return false, fmt.Errorf("migrate: apply functions (%v): %w%s", f.Files, err, privilegeHint(ctx, conn, err))
	}
	return true, nil
}

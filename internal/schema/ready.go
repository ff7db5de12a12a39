package schema

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Readiness compares the migrations applied to the database with the ones
// this binary carries.
type Readiness struct {
	// Latest is the highest migration this binary carries.
	Latest int
	// Applied is the highest migration applied to the database (0: none).
	Applied int
	// Missing are the binary's migrations the database lacks: the schema is
	// behind this binary, which cannot serve it.
	Missing []int
	// Unknown are applied migrations this binary does not carry: a newer
	// lethe migrated the database (a rolling upgrade). Migrations only add,
	// so this binary still serves it. The replaced chain's versions,
	// recorded on an adopted database, are known.
	Unknown []int
	// Functions is the checksum of this binary's function files;
	// FunctionsMissing says the database never recorded it (the functions,
	// views and triggers are those of an older lethe, or none).
	Functions        string
	FunctionsMissing bool
}

// Ready reports whether the database holds every migration of the binary
// and its function files.
func (r Readiness) Ready() bool { return len(r.Missing) == 0 && !r.FunctionsMissing }

// Check reads lethe.schema_migrations and lethe.schema_repeatables and
// compares them with the embedded migrations and function files. It only
// reads: two queries.
func Check(ctx context.Context, pool *pgxpool.Pool) (Readiness, error) {
	var r Readiness
	migs, err := Migrations()
	if err != nil {
		return r, err
	}
	funcs, err := LoadFunctions()
	if err != nil {
		return r, err
	}
	applied, err := appliedList(ctx, pool)
	if err != nil {
		return r, err
	}
	r.Functions = funcs.Checksum
	if r.FunctionsMissing, err = checksumMissing(ctx, pool, funcs.Checksum); err != nil {
		return r, err
	}
	have := make(map[int]bool, len(applied))
	for _, v := range applied {
		have[v] = true
		r.Applied = max(r.Applied, v)
	}
	known := make(map[int]bool, len(migs)+len(legacyVersions))
	for _, v := range legacyVersions {
		known[v] = true // the replaced chain: kept on an adopted database
	}
	for _, m := range migs {
		known[m.Version] = true
		r.Latest = max(r.Latest, m.Version)
		if !have[m.Version] {
			r.Missing = append(r.Missing, m.Version)
		}
	}
	for _, v := range applied {
		if !known[v] {
			r.Unknown = append(r.Unknown, v)
		}
	}
	return r, nil
}

// appliedList reads the applied versions; a database never migrated (no
// schema lethe or no migrations table) has none.
func appliedList(ctx context.Context, pool *pgxpool.Pool) ([]int, error) {
	var applied []int
	rows, err := pool.Query(ctx, "SELECT version FROM lethe.schema_migrations ORDER BY version")
	if err == nil {
		applied, err = pgx.CollectRows(rows, pgx.RowTo[int])
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && (pgErr.Code == "42P01" || pgErr.Code == "3F000") {
		return nil, nil // undefined table or schema: nothing applied
	}
	if err != nil {
		return nil, fmt.Errorf("read applied migrations: %w", err)
	}
	return applied, nil
}

// checksumMissing reports whether the function files' checksum was never
// recorded; a database without the table has none.
func checksumMissing(ctx context.Context, pool *pgxpool.Pool, checksum string) (bool, error) {
	var recorded bool
	err := pool.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM lethe.schema_repeatables WHERE checksum = $1)", checksum).Scan(&recorded)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && (pgErr.Code == "42P01" || pgErr.Code == "3F000") {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("read applied function files: %w", err)
	}
	return !recorded, nil
}

package schema

import (
	"context"
	"io/fs"

	"github.com/jackc/pgx/v5/pgxpool"
)

// MigrateWithFunctions is Migrate with the function files of fsys (a
// folder functions/ of *.sql) instead of the embedded ones.
func MigrateWithFunctions(ctx context.Context, pool *pgxpool.Pool, fsys fs.FS) ([]int, error) {
	migs, err := Migrations()
	if err != nil {
		return nil, err
	}
	funcs, err := loadFunctions(fsys)
	if err != nil {
		return nil, err
	}
	return migrate(ctx, pool, migs, funcs)
}

// FunctionsFS is the embedded folder of function files.
var FunctionsFS fs.FS = functionsFS

const (
	BaselineVersion = baselineVersion
	LegacyLast      = legacyLast
	LegacyRelease   = legacyRelease
)

package retention

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
)

// WALUsage is the server's write-ahead log on disk, part of a queue's
// footprint: every push and every deletion is written there first, and
// PostgreSQL keeps it back to the last checkpoint and up to max_wal_size.
type WALUsage struct {
	// Bytes and Files are the WAL folder's contents (pg_ls_waldir); nil
	// when the role may not list it, and Unavailable says why.
	Bytes       *int64 `json:"bytes"`
	Files       *int64 `json:"files"`
	Size        string `json:"size,omitempty"`
	Unavailable string `json:"unavailable,omitempty"`
	// The settings that bound it, as the server reports them.
	MaxWALSize        string `json:"maxWalSize"`
	MinWALSize        string `json:"minWalSize"`
	CheckpointTimeout string `json:"checkpointTimeout"`
}

// walRefused is said instead of the WAL's size when the role may not
// list the folder.
const walRefused = "not shown: listing the WAL folder (pg_ls_waldir) needs superuser or membership in pg_monitor " +
	"(GRANT pg_monitor TO the role lethe connects as)"

// walUsage reads the WAL's size when the role may, and its settings. It
// asks for the right first instead of letting the call fail, so a refused
// role leaves no error in the server's log.
func walUsage(ctx context.Context, pool *pgxpool.Pool) (WALUsage, error) {
	var w WALUsage
	var allowed bool
	err := pool.QueryRow(ctx, `
		SELECT current_setting('max_wal_size'), current_setting('min_wal_size'), current_setting('checkpoint_timeout'),
		       has_function_privilege('pg_catalog.pg_ls_waldir()', 'EXECUTE')`).
		Scan(&w.MaxWALSize, &w.MinWALSize, &w.CheckpointTimeout, &allowed)
	if err != nil {
		return w, fmt.Errorf("wal usage: %w", err)
	}
	if !allowed {
		w.Unavailable = walRefused
		return w, nil
	}
	var bytes, files int64
	var size string
	err = pool.QueryRow(ctx, `SELECT coalesce(sum(size), 0)::bigint, count(*), pg_size_pretty(coalesce(sum(size), 0)::bigint)
		FROM pg_catalog.pg_ls_waldir()`).Scan(&bytes, &files, &size)
	if err != nil {
		return w, fmt.Errorf("wal usage: %w", err)
	}
	w.Bytes, w.Files, w.Size = &bytes, &files, size
	return w, nil
}

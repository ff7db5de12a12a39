package inspect

import (
	"context"
	"fmt"

	"github.com/lethe-mq/lethe/client/api"
)

// walRefused is said instead of the WAL's size when the role may not
// list the folder.
const walRefused = "not shown: listing the WAL folder (pg_ls_waldir) needs superuser or membership in pg_monitor " +
	"(GRANT pg_monitor TO the role lethe connects as)"

// walUsage reads the WAL's size when the role may, and its settings. It
// asks for the right first instead of letting the call fail, so a refused
// role leaves no error in the server's log.
func (r *Reader) walUsage(ctx context.Context) (api.WALUsage, error) {
	var w api.WALUsage
	var allowed bool
	err := r.pool.QueryRow(ctx, `
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
	err = r.pool.QueryRow(ctx, `SELECT coalesce(sum(size), 0)::bigint, count(*), pg_size_pretty(coalesce(sum(size), 0)::bigint)
		FROM pg_catalog.pg_ls_waldir()`).Scan(&bytes, &files, &size)
	if err != nil {
		return w, fmt.Errorf("wal usage: %w", err)
	}
	w.Bytes, w.Files, w.Size = &bytes, &files, size
	return w, nil
}

package ceiling

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lethe-mq/lethe/bench/internal/meter"
)

// leafColumns are the columns of a table shaped like one of lethe's
// segment leaves (migration 050), in order.
var leafColumns = []string{"partition_id", "base_offset", "last_offset", "frame_count", "first_at", "last_at",
	"byte_size", "frames", "tier", "appended_at"}

// createLeaf (re)creates bench_raw.<name> empty, shaped like a segment leaf
// of lethe: the same columns, primary key, TOAST storage and compression
// (lz4 where the server has it), so the raw drop and move pay for what
// lethe's do.
func createLeaf(ctx context.Context, pool *pgxpool.Pool, name string) error {
	t := pgx.Identifier{"bench_raw", name}.Sanitize()
	for _, sql := range []string{
		`DROP TABLE IF EXISTS ` + t,
		`CREATE TABLE ` + t + ` (
		    partition_id uuid   NOT NULL,
		    base_offset  bigint NOT NULL,
		    last_offset  bigint NOT NULL,
		    frame_count  int    NOT NULL,
		    first_at     timestamptz NOT NULL,
		    last_at      timestamptz NOT NULL,
		    byte_size    int    NOT NULL,
		    frames       bytea  NOT NULL,
		    tier         text   NOT NULL,
		    appended_at  timestamptz NOT NULL,
		    PRIMARY KEY (partition_id, base_offset))`,
		`DO $$ BEGIN
		     IF EXISTS (SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY(enumvals)) THEN
		         EXECUTE 'ALTER TABLE ` + t + ` ALTER COLUMN frames SET COMPRESSION lz4';
		     END IF;
		 END $$`,
	} {
		if _, err := pool.Exec(ctx, sql); err != nil {
			return fmt.Errorf("ceiling: create %s: %w", t, err)
		}
	}
	return nil
}

// leafFill is what fillLeaf writes: frames in rows of perRow over
// partitions, as lethe's bench backlog lays them out.
type leafFill struct {
	table      string
	frames     int
	perRow     int
	partitions int
	size       int
}

// fillLeaf writes the rows by COPY, one goroutine per partition, about
// 8,000 frames a COPY, reusing a few distinct row bodies (each row is
// TOASTed on its own, so reuse spares nothing). It answers the partitions'
// ids.
func fillLeaf(ctx context.Context, env *Env, pool *pgxpool.Pool, f leafFill) ([]uuid.UUID, error) {
	blobs := segmentBlobs(uint64(f.size)+5, 8, f.perRow, f.size)
	var written atomic.Int64
	prog := meter.StartProgress(env.Out, fmt.Sprintf("ceiling %s rows", f.table), func() string {
		return fmt.Sprintf("%s of %s frames written", meter.Group(written.Load()), meter.Group(int64(f.frames)))
	})
	defer prog.Stop()
	at := time.Now().Add(-9 * 24 * time.Hour)
	pids := make([]uuid.UUID, f.partitions)
	errs := make(chan error, f.partitions)
	var wg sync.WaitGroup
	for p := range pids {
		pids[p] = uuid.New()
		share := f.frames / f.partitions
		if p < f.frames%f.partitions {
			share++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for off := 0; off < share; {
				var rows [][]any
				for len(rows) < max(1, 8000/f.perRow) && off < share {
					n := min(f.perRow, share-off)
					blob := blobs[(off/f.perRow)%len(blobs)]
					if n < f.perRow {
						blob = firstFrames(blob, n)
					}
					rows = append(rows, []any{pids[p], int64(off), int64(off + n - 1), n, at, at, len(blob), blob, "1w", at})
					off += n
				}
				if _, err := pool.CopyFrom(ctx, pgx.Identifier{"bench_raw", f.table}, leafColumns, pgx.CopyFromRows(rows)); err != nil {
					errs <- fmt.Errorf("ceiling: fill %s: %w", f.table, err)
					return
				}
				for _, r := range rows {
					written.Add(int64(r[3].(int)))
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return pids, <-errs
}

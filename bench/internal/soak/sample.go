package soak

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lethe-mq/lethe/bench/internal/meter"
	"github.com/lethe-mq/lethe/bench/internal/stack"
)

// Sample is the footprint at one instant and the load of the interval
// before it.
type Sample struct {
	At      time.Time `json:"at"`
	Elapsed float64   `json:"elapsed_s"` // since the load started
	// DatabaseBytes is pg_database_size of lethe's database.
	DatabaseBytes int64 `json:"database_bytes"`
	// WALBytes is the WAL folder on disk (pg_ls_waldir); WALError says why
	// it could not be read (the role needs pg_monitor or superuser).
	WALBytes int64  `json:"wal_bytes"`
	WALFiles int    `json:"wal_files"`
	WALError string `json:"wal_error,omitempty"`
	// WALWritten is the WAL generated since the previous sample
	// (pg_current_wal_lsn delta), and WALPosition the position itself.
	WALWritten  int64 `json:"wal_written_bytes"`
	WALPosition int64 `json:"wal_position"`
	// Checkpoints counted by the server so far: by checkpoint_timeout,
	// and requested (max_wal_size reached, or CHECKPOINT).
	CheckpointsTimed     int64         `json:"checkpoints_timed"`
	CheckpointsRequested int64         `json:"checkpoints_requested"`
	RSSBytes             int64         `json:"lethe_rss_bytes"` // 0: not measured
	Push                 meter.Summary `json:"push_latency"`    // of the interval
	E2E                  meter.Summary `json:"e2e_latency"`     // of the interval
	Pushed               int64         `json:"pushed"`          // so far
	Received             int64         `json:"received"`        // so far, distinct, summed over groups
	Tables               []TableSample `json:"tables"`
}

// TableSample is one table of schema lethe; a partitioned table is the
// sum of its leaf partitions, which are listed too.
type TableSample struct {
	Name  string `json:"name"`
	Heap  int64  `json:"heap_bytes"` // main fork, free-space and visibility maps
	Toast int64  `json:"toast_bytes"`
	Index int64  `json:"index_bytes"`
	Total int64  `json:"total_bytes"`
	Live  int64  `json:"live_tuples"`
	Dead  int64  `json:"dead_tuples"`
	// ToastDead are the TOAST table's dead tuples (chunks).
	ToastDead int64 `json:"toast_dead_tuples"`
	// Updates and HOTUpdates count since the server started.
	Updates     int64         `json:"updates"`
	HOTUpdates  int64         `json:"hot_updates"`
	Autovacuums int64         `json:"autovacuums"` // of the table and its TOAST table
	Partitions  []TableSample `json:"partitions,omitempty"`
}

// tablesSQL lists every table of schema lethe that is not a partition,
// with each leaf partition under it (a plain table is its own leaf), their
// sizes and their statistics, TOAST's counted apart.
const tablesSQL = `
WITH roots AS (
    SELECT c.oid, n.nspname || '.' || c.relname AS name
      FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = 'lethe' AND c.relkind IN ('r', 'p') AND NOT c.relispartition
), leaves AS (
    SELECT r.name AS root, r.oid AS root_oid, coalesce(t.relid, r.oid) AS leaf
      FROM roots r
      LEFT JOIN LATERAL (SELECT p.relid FROM pg_catalog.pg_partition_tree(r.oid) p WHERE p.isleaf) t ON true
)
SELECT l.root, l.leaf::regclass::text, l.leaf <> l.root_oid,
       pg_catalog.pg_table_size(l.leaf) - coalesce(pg_catalog.pg_total_relation_size(nullif(c.reltoastrelid, 0)), 0),
       coalesce(pg_catalog.pg_total_relation_size(nullif(c.reltoastrelid, 0)), 0),
       pg_catalog.pg_indexes_size(l.leaf),
       coalesce(s.n_live_tup, 0), coalesce(s.n_dead_tup, 0), coalesce(ts.n_dead_tup, 0),
       coalesce(s.n_tup_upd, 0), coalesce(s.n_tup_hot_upd, 0),
       coalesce(s.autovacuum_count, 0) + coalesce(ts.autovacuum_count, 0)
  FROM leaves l
  JOIN pg_catalog.pg_class c ON c.oid = l.leaf
  LEFT JOIN pg_catalog.pg_stat_all_tables s ON s.relid = l.leaf
  LEFT JOIN pg_catalog.pg_stat_all_tables ts ON ts.relid = c.reltoastrelid
 ORDER BY l.root, 2`

// sampler reads the footprint from lethe's database.
type sampler struct {
	pool    *pgxpool.Pool
	pid     int // lethe's process, for its RSS; 0: not measured
	lastLSN int64
}

// take reads one sample; the load figures are filled by the caller.
func (s *sampler) take(ctx context.Context, began time.Time) (Sample, error) {
	sm := Sample{At: time.Now().UTC()}
	sm.Elapsed = sm.At.Sub(began).Seconds()
	err := s.pool.QueryRow(ctx, `
		SELECT pg_catalog.pg_database_size(current_database()),
		       pg_catalog.pg_wal_lsn_diff(pg_catalog.pg_current_wal_lsn(), '0/0')::bigint,
		       b.checkpoints_timed, b.checkpoints_req
		  FROM pg_catalog.pg_stat_bgwriter b`).
		Scan(&sm.DatabaseBytes, &sm.WALPosition, &sm.CheckpointsTimed, &sm.CheckpointsRequested)
	if err != nil {
		return sm, fmt.Errorf("soak: sample the database: %w", err)
	}
	if s.lastLSN > 0 {
		sm.WALWritten = sm.WALPosition - s.lastLSN
	}
	s.lastLSN = sm.WALPosition
	if err := s.pool.QueryRow(ctx, `SELECT coalesce(sum(size), 0)::bigint, count(*) FROM pg_catalog.pg_ls_waldir()`).
		Scan(&sm.WALBytes, &sm.WALFiles); err != nil {
		sm.WALError = "WAL folder not readable (needs pg_monitor or superuser): " + err.Error()
	}
	if sm.Tables, err = s.tables(ctx); err != nil {
		return sm, err
	}
	if s.pid != 0 {
		sm.RSSBytes, _ = stack.RSS(s.pid)
	}
	return sm, nil
}

func (s *sampler) tables(ctx context.Context) ([]TableSample, error) {
	rows, err := s.pool.Query(ctx, tablesSQL)
	if err != nil {
		return nil, fmt.Errorf("soak: sample the tables: %w", err)
	}
	defer rows.Close()
	var out []TableSample
	for rows.Next() {
		var root string
		var isPart bool
		var t TableSample
		if err := rows.Scan(&root, &t.Name, &isPart, &t.Heap, &t.Toast, &t.Index, &t.Live, &t.Dead, &t.ToastDead,
			&t.Updates, &t.HOTUpdates, &t.Autovacuums); err != nil {
			return nil, fmt.Errorf("soak: sample the tables: %w", err)
		}
		t.Total = t.Heap + t.Toast + t.Index
		if len(out) == 0 || out[len(out)-1].Name != root {
			out = append(out, TableSample{Name: root})
		}
		top := &out[len(out)-1]
		if !isPart {
			*top = t
			continue
		}
		top.add(t)
		top.Partitions = append(top.Partitions, t)
	}
	return out, rows.Err()
}

func (t *TableSample) add(p TableSample) {
	t.Heap += p.Heap
	t.Toast += p.Toast
	t.Index += p.Index
	t.Total += p.Total
	t.Live += p.Live
	t.Dead += p.Dead
	t.ToastDead += p.ToastDead
	t.Updates += p.Updates
	t.HOTUpdates += p.HOTUpdates
	t.Autovacuums += p.Autovacuums
}

// Table finds a table of the sample by name.
func (sm *Sample) Table(name string) (TableSample, bool) {
	i := slices.IndexFunc(sm.Tables, func(t TableSample) bool { return t.Name == name })
	if i < 0 {
		return TableSample{}, false
	}
	return sm.Tables[i], true
}

package inspect

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/lethe-mq/lethe/client/api"
)

// queenStatsSQL is Queen's get_postgres_stats_v1 over schema lethe: the
// same keys and fields, with its row limits applied to the rows (Queen's
// LIMIT after jsonb_agg limits nothing). bufferUsage is left out: it needs
// pg_buffercache, which lethe does not install.
const queenStatsSQL = `
	SELECT jsonb_build_object(
	  'database', current_database(),
	  'databaseCache', (SELECT jsonb_build_object('database', datname, 'diskReads', blks_read, 'cacheHits', blks_hit,
	        'cacheHitRatio', round(blks_hit::numeric / nullif(blks_hit + blks_read, 0) * 100, 2)::float8)
	      FROM pg_catalog.pg_stat_database WHERE datname = current_database()),
	  'tableCache', (SELECT coalesce(jsonb_agg(jsonb_build_object('schema', schemaname, 'table', relname,
	        'diskReads', heap_blks_read, 'cacheHits', heap_blks_hit,
	        'cacheHitRatio', round(heap_blks_hit::numeric / nullif(heap_blks_hit + heap_blks_read, 0) * 100, 2)::float8)
	        ORDER BY heap_blks_read DESC, relname), '[]')
	      FROM pg_catalog.pg_statio_all_tables WHERE schemaname = 'lethe'),
	  'indexCache', (SELECT coalesce(jsonb_agg(jsonb_build_object('schema', schemaname, 'table', relname,
	        'index', indexrelname, 'diskReads', idx_blks_read, 'cacheHits', idx_blks_hit,
	        'cacheHitRatio', round(idx_blks_hit::numeric / nullif(idx_blks_hit + idx_blks_read, 0) * 100, 2)::float8)
	        ORDER BY idx_blks_read DESC, indexrelname), '[]')
	      FROM (SELECT * FROM pg_catalog.pg_statio_all_indexes WHERE schemaname = 'lethe'
	             ORDER BY idx_blks_read DESC, indexrelname LIMIT 20) i),
	  'cacheSummary', jsonb_build_object(
	      'tables', (SELECT jsonb_build_object('diskReads', coalesce(sum(heap_blks_read), 0), 'cacheHits', coalesce(sum(heap_blks_hit), 0),
	            'hitRatio', round(sum(heap_blks_hit)::numeric / nullif(sum(heap_blks_hit) + sum(heap_blks_read), 0) * 100, 2)::float8)
	          FROM pg_catalog.pg_statio_all_tables WHERE schemaname = 'lethe'),
	      'indexes', (SELECT jsonb_build_object('diskReads', coalesce(sum(idx_blks_read), 0), 'cacheHits', coalesce(sum(idx_blks_hit), 0),
	            'hitRatio', round(sum(idx_blks_hit)::numeric / nullif(sum(idx_blks_hit) + sum(idx_blks_read), 0) * 100, 2)::float8)
	          FROM pg_catalog.pg_statio_all_indexes WHERE schemaname = 'lethe')),
	  'deadTuples', (SELECT coalesce(jsonb_agg(jsonb_build_object('schema', schemaname, 'table', relname,
	        'deadTuples', n_dead_tup, 'liveTuples', n_live_tup,
	        'deadPercentage', round(n_dead_tup::numeric / nullif(n_live_tup, 0) * 100, 2)::float8,
	        'lastVacuum', to_char(last_vacuum AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
	        'lastAutovacuum', to_char(last_autovacuum AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'))
	        ORDER BY n_dead_tup DESC, relname), '[]')
	      FROM (SELECT * FROM pg_catalog.pg_stat_all_tables WHERE schemaname = 'lethe' AND n_dead_tup > 0
	             ORDER BY n_dead_tup DESC, relname LIMIT 15) d),
	  'hotUpdates', (SELECT coalesce(jsonb_agg(jsonb_build_object('schema', schemaname, 'table', relname,
	        'totalUpdates', n_tup_upd, 'hotUpdates', n_tup_hot_upd,
	        'hotUpdatePercentage', round(n_tup_hot_upd::numeric / nullif(n_tup_upd, 0) * 100, 2)::float8)
	        ORDER BY n_tup_upd DESC, relname), '[]')
	      FROM (SELECT * FROM pg_catalog.pg_stat_all_tables WHERE schemaname = 'lethe' AND n_tup_upd > 0
	             ORDER BY n_tup_upd DESC, relname LIMIT 15) h),
	  'activeQueries', (SELECT coalesce(jsonb_agg(jsonb_build_object('pid', pid,
	        'duration', extract(epoch FROM now() - query_start)::float8, 'state', state, 'query', left(query, 200),
	        'waitEventType', wait_event_type, 'waitEvent', wait_event) ORDER BY query_start), '[]')
	      FROM (SELECT * FROM pg_catalog.pg_stat_activity
	             WHERE state <> 'idle' AND query_start < now() - interval '1 second' AND pid <> pg_backend_pid()
	             ORDER BY query_start LIMIT 10) a),
	  'autovacuumStatus', (SELECT coalesce(jsonb_agg(jsonb_build_object('table', relname,
	        'lastAutovacuum', to_char(last_autovacuum AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
	        'deadTuples', n_dead_tup, 'autovacuumCount', autovacuum_count, 'autoanalyzeCount', autoanalyze_count)
	        ORDER BY n_dead_tup DESC, relname), '[]')
	      FROM (SELECT * FROM pg_catalog.pg_stat_all_tables WHERE schemaname = 'lethe' AND n_dead_tup > 1000
	             ORDER BY n_dead_tup DESC, relname LIMIT 10) v),
	  'bufferConfig', (SELECT jsonb_build_object('sharedBuffers', setting,
	        'sharedBuffersSize', pg_size_pretty(setting::bigint * 8192))
	      FROM pg_catalog.pg_settings WHERE name = 'shared_buffers'))`

// queenStats fills st's fields that Queen's answer has.
func (r *Reader) queenStats(ctx context.Context, st *api.PostgresStats) error {
	var raw []byte
	if err := r.pool.QueryRow(ctx, queenStatsSQL).Scan(&raw); err != nil {
		return fmt.Errorf("postgres stats: %w", err)
	}
	if err := json.Unmarshal(raw, st); err != nil {
		return fmt.Errorf("postgres stats: decode: %w", err)
	}
	st.Timestamp = r.clock.Now().UTC()
	st.BufferUsage = []api.BufferUsage{}
	return nil
}

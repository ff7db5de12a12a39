package inspect

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/pgtest"
	"github.com/lethe-mq/lethe/internal/store"
)

// Queen's answer (lib/schema/procedures/015_postgres_stats.sql): its keys,
// and the fields of one tableSizes entry.
var (
	queenKeys = []string{"timestamp", "database", "databaseCache", "tableCache", "indexCache", "cacheSummary",
		"deadTuples", "hotUpdates", "activeQueries", "autovacuumStatus", "bufferConfig", "bufferUsage", "tableSizes"}
	queenTableFields = []string{"table", "totalSize", "totalSizeBytes", "tableSize", "tableSizeBytes", "indexSize", "indexSizeBytes"}
	letheTableFields = []string{"deadTuples", "lastAutovacuum", "bloatEstimateBytes"}
)

// postgres-stats answers Queen's keys and fields by Queen's names, and per
// lethe table (partitions summed) its dead tuples, last autovacuum and a
// bloat estimate.
func TestPostgresStatsInQueensShape(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := walPool(t, pgtest.NewDatabase(t))
	if err := store.EnsureLeaves(ctx, pool, []string{"forever", "txns"}, time.Now(), 0); err != nil {
		t.Fatal(err)
	}
	deleteSettings(t, pool, 20)
	r := New(Config{Pool: pool})
	var st *api.PostgresStats
	for deadline := time.Now().Add(30 * time.Second); ; {
		var err error
		if st, err = r.PostgresStats(ctx); err != nil {
			t.Fatal(err)
		}
		if tableSize(st, "settings").DeadTuples >= 20 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("settings shows %d dead tuples after deleting 20", tableSize(st, "settings").DeadTuples)
		}
		time.Sleep(100 * time.Millisecond)
	}
	raw, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		t.Fatal(err)
	}
	for _, k := range queenKeys {
		if _, ok := top[k]; !ok {
			t.Errorf("no key %q (Queen's); have %s", k, raw)
		}
	}
	var sizes []map[string]any
	if err := json.Unmarshal(top["tableSizes"], &sizes); err != nil {
		t.Fatal(err)
	}
	for _, e := range sizes {
		for _, f := range append(slices.Clone(queenTableFields), letheTableFields...) {
			if _, ok := e[f]; !ok {
				t.Errorf("tableSizes entry %v has no %q", e["table"], f)
			}
		}
	}
	seg := tableSize(st, "segments")
	if seg.TotalSizeBytes <= 0 || seg.IndexSizeBytes <= 0 {
		t.Errorf("segments (partitioned) = %+v, want the sizes of its partitions summed", seg)
	}
	if s := tableSize(st, "settings"); s.BloatEstimateBytes < 0 || s.BloatEstimateBytes > s.TableSizeBytes {
		t.Errorf("settings bloat estimate %d outside 0..%d", s.BloatEstimateBytes, s.TableSizeBytes)
	}
	if !slices.ContainsFunc(st.DeadTuples, func(d api.DeadTuples) bool { return d.Table == "settings" && d.DeadTuples >= 20 }) {
		t.Errorf("deadTuples = %+v, want settings with 20", st.DeadTuples)
	}
	if st.Database == "" || st.DatabaseCache.Database != st.Database || st.BufferConfig.SharedBuffers == "" {
		t.Errorf("database %q, databaseCache %+v, bufferConfig %+v", st.Database, st.DatabaseCache, st.BufferConfig)
	}
}

func tableSize(st *api.PostgresStats, name string) api.QueenTableSize {
	for _, t := range st.TableSizes {
		if t.Table == name {
			return t
		}
	}
	return api.QueenTableSize{}
}

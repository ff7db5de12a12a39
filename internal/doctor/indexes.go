package doctor

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/store"
)

// predicate is a retention predicate: the leading columns of the index a
// deleting step reads table by, and the rule that deletes.
type predicate struct {
	table   string
	columns []string
	rule    string
}

// predicates lists every column set a deleting step of lethe selects its
// rows by. Each segment leaf is checked on its own: the partitioned
// segments table has no index of its own.
var predicates = []predicate{
	{"dead_letters", []string{"failed_at"}, "DLQ_RETENTION_DAYS"},
	{"retention_history", []string{"executed_at"}, "METRICS_RETENTION_DAYS"},
	{"retention_losses", []string{"executed_at"}, "METRICS_RETENTION_DAYS"},
	{"retention_runs", []string{"started_at"}, "METRICS_RETENTION_DAYS"},
	{"reclaim_history", []string{"executed_at"}, "METRICS_RETENTION_DAYS"},
	{"traces", []string{"created_at"}, "TRACES_RETENTION_DAYS"},
	{"stream_state", []string{"updated_at"}, "STREAMS_STATE_IDLE_DAYS"},
	{"stream_state", []string{"query_id"}, "the state of a retired streaming query"},
	{"leaves", []string{"parent", "lo"}, "the tiers' leaf drops"},
	{"retention_holds", []string{"queue_id"}, "every rule, which a queue's active holds stop"},
}

// segmentKey is what every segment leaf is read and deleted by: a
// partition's head, in offset order.
var segmentKey = []string{"partition_id", "base_offset"}

type tableIndex struct {
	table, name string
	valid       bool
	columns     []string
}

// checkIndexes finds, for every retention predicate, a valid index whose
// leading columns are the predicate's.
func checkIndexes(ctx context.Context, q Querier, _ Config) (string, string, string, error) {
	rows, err := q.Query(ctx, `
		SELECT t.relname::text, i.indexrelid::regclass::text, i.indisvalid AND i.indisready,
		       array(SELECT a.attname::text
		               FROM unnest(i.indkey::int2[]) WITH ORDINALITY k(attnum, ord)
		               JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
		              ORDER BY k.ord)
		  FROM pg_index i
		  JOIN pg_class t ON t.oid = i.indrelid
		  JOIN pg_namespace n ON n.oid = t.relnamespace
		 WHERE n.nspname = 'lethe'`)
	if err != nil {
		return "", "", "", fmt.Errorf("list lethe's indexes: %w", err)
	}
	indexes, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (tableIndex, error) {
		var ix tableIndex
		err := r.Scan(&ix.table, &ix.name, &ix.valid, &ix.columns)
		return ix, err
	})
	if err != nil {
		return "", "", "", fmt.Errorf("list lethe's indexes: %w", err)
	}
	leaves, err := store.SegmentTables(ctx, q)
	if err != nil {
		return "", "", "", err
	}
	want := slices.Clone(predicates)
	for _, l := range leaves {
		want = append(want, predicate{l, segmentKey, "retention, max-wait eviction and tier moves (a partition's head)"})
	}
	var problems, fixes []string
	for _, p := range want {
		found, invalid := "", ""
		for _, ix := range indexes {
			if ix.table != p.table || len(ix.columns) < len(p.columns) || !slices.Equal(ix.columns[:len(p.columns)], p.columns) {
				continue
			}
			if ix.valid {
				found = ix.name
				break
			}
			invalid = ix.name
		}
		cols := strings.Join(p.columns, ", ")
		switch {
		case found != "":
		case invalid != "":
			problems = append(problems, fmt.Sprintf("lethe.%s (%s), read by %s: its index %s is invalid (a failed concurrent build)", p.table, cols, p.rule, invalid))
			fixes = append(fixes, fmt.Sprintf("REINDEX INDEX CONCURRENTLY %s;", invalid))
		default:
			problems = append(problems, fmt.Sprintf("lethe.%s (%s), read by %s: no index", p.table, cols, p.rule))
			fixes = append(fixes, fmt.Sprintf("CREATE INDEX CONCURRENTLY ON lethe.%s (%s);", p.table, cols))
		}
	}
	if len(problems) > 0 {
		return api.DoctorFail, fmt.Sprintf("%d of %d retention predicates cannot use an index, so their deleting steps scan the table: %s",
			len(problems), len(want), strings.Join(problems, "; ")), strings.Join(fixes, " "), nil
	}
	return api.DoctorOK, fmt.Sprintf("%d predicates, each with a valid index (%d segment leaves by %s, and %d tables by their time or key columns)",
		len(want), len(leaves), strings.Join(segmentKey, ", "), len(predicates)), "", nil
}

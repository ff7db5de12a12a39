package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/lethe-mq/lethe/client"
	"github.com/lethe-mq/lethe/client/api"
)

// storageTables is how many of the largest tables the storage lines name.
const storageTables = 3

// printStorage adds to `lethe retention status` what the whole database
// occupies, its largest tables and the write-ahead log beside it
// (GET /api/v1/analytics/postgres-stats). A failure to read it is said in
// a line: the queues' status above it stands.
func printStorage(ctx context.Context, w io.Writer, c *client.Client) {
	var st api.PostgresStats
	if err := c.Do(ctx, http.MethodGet, "/api/v1/analytics/postgres-stats", nil, &st); err != nil {
		fmt.Fprintf(w, "\nstorage     not shown: %v\n", err)
		return
	}
	fmt.Fprintf(w, "\nstorage     database %s: %s, of which schema %s %s\n", st.Database,
		retentionBytes(st.DatabaseBytes), st.Schema, retentionBytes(st.SchemaBytes))
	var largest []string
	for _, t := range st.Tables[:min(storageTables, len(st.Tables))] {
		largest = append(largest, fmt.Sprintf("%s %s (%d dead rows)", t.Table, retentionBytes(t.TotalBytes), t.DeadTuples))
	}
	if len(largest) > 0 {
		fmt.Fprintf(w, "  largest   %s\n", strings.Join(largest, ", "))
	}
	wal := st.WAL
	limits := fmt.Sprintf("max_wal_size %s, checkpoint_timeout %s", wal.MaxWALSize, wal.CheckpointTimeout)
	if wal.Bytes == nil {
		fmt.Fprintf(w, "  WAL       %s (%s)\n", wal.Unavailable, limits)
		return
	}
	share := 100 * float64(*wal.Bytes) / float64(max(1, *wal.Bytes+st.DatabaseBytes))
	fmt.Fprintf(w, "  WAL       %s in %d files, %.0f%% of database and WAL together (%s)\n",
		retentionBytes(*wal.Bytes), *wal.Files, share, limits)
}

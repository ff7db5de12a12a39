package api

// PostgresStats is GET /api/v1/analytics/postgres-stats: the size of
// lethe's database, of every table of its schema, and of the server's
// write-ahead log.
type PostgresStats struct {
	Database      string      `json:"database"`
	DatabaseBytes int64       `json:"databaseBytes"`
	DatabaseSize  string      `json:"databaseSize"`
	Schema        string      `json:"schema"`
	SchemaBytes   int64       `json:"schemaBytes"`
	Tables        []TableSize `json:"tables"`
	WAL           WALUsage    `json:"wal"`
}

// TableSize is one table and what it occupies.
type TableSize struct {
	Table string `json:"table"`
	// TotalBytes is everything: heap, TOAST (with its index), indexes,
	// free-space and visibility maps.
	TotalBytes int64  `json:"totalBytes"`
	TableBytes int64  `json:"tableBytes"`
	ToastBytes int64  `json:"toastBytes"`
	IndexBytes int64  `json:"indexBytes"`
	TotalSize  string `json:"totalSize"`
	TableSize  string `json:"tableSize"`
	IndexSize  string `json:"indexSize"`
	// RowEstimate is the planner's estimate (-1: never analyzed).
	RowEstimate int64 `json:"rowEstimate"`
	// DeadTuples are rows vacuum has yet to make reusable (a partitioned
	// table's are its partitions').
	DeadTuples int64 `json:"deadTuples"`
}

// WALUsage is the server's write-ahead log on disk. Bytes and Files are
// nil when lethe's role may not list the WAL folder (it needs pg_monitor
// or superuser); Unavailable then says so.
type WALUsage struct {
	Bytes             *int64 `json:"bytes"`
	Files             *int64 `json:"files"`
	Size              string `json:"size,omitempty"`
	Unavailable       string `json:"unavailable,omitempty"`
	MaxWALSize        string `json:"maxWalSize"`
	MinWALSize        string `json:"minWalSize"`
	CheckpointTimeout string `json:"checkpointTimeout"`
}

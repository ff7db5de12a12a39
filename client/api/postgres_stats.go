package api

import "time"

// PostgresStats is GET /api/v1/analytics/postgres-stats: Queen's answer
// (timestamp, database, databaseCache, tableCache, indexCache,
// cacheSummary, deadTuples, hotUpdates, activeQueries, autovacuumStatus,
// bufferConfig, bufferUsage, tableSizes) over schema lethe, and lethe's
// own: the size of the database and of every table of its schema, and of
// the server's write-ahead log.
type PostgresStats struct {
	Timestamp        time.Time          `json:"timestamp"`
	Database         string             `json:"database"`
	DatabaseCache    DatabaseCache      `json:"databaseCache"`
	TableCache       []TableCache       `json:"tableCache"`
	IndexCache       []IndexCache       `json:"indexCache"`
	CacheSummary     CacheSummary       `json:"cacheSummary"`
	DeadTuples       []DeadTuples       `json:"deadTuples"`
	HotUpdates       []HotUpdates       `json:"hotUpdates"`
	ActiveQueries    []ActiveQuery      `json:"activeQueries"`
	AutovacuumStatus []AutovacuumStatus `json:"autovacuumStatus"`
	BufferConfig     BufferConfig       `json:"bufferConfig"`
	// BufferUsage is always empty: it needs the pg_buffercache extension,
	// which lethe does not install (Queen answers [] without it too).
	BufferUsage []BufferUsage `json:"bufferUsage"`
	// TableSizes has one entry per lethe table (a partitioned one with its
	// partitions summed), Queen's fields plus lethe's.
	TableSizes []QueenTableSize `json:"tableSizes"`

	DatabaseBytes int64  `json:"databaseBytes"`
	DatabaseSize  string `json:"databaseSize"`
	Schema        string `json:"schema"`
	SchemaBytes   int64  `json:"schemaBytes"`
	// Tables lists every relation of the schema, partitions included.
	Tables []TableSize `json:"tables"`
	WAL    WALUsage    `json:"wal"`
}

// DatabaseCache is the database's buffer cache hits and disk reads.
type DatabaseCache struct {
	Database      string   `json:"database"`
	DiskReads     int64    `json:"diskReads"`
	CacheHits     int64    `json:"cacheHits"`
	CacheHitRatio *float64 `json:"cacheHitRatio"`
}

// TableCache is one table's heap cache hits (null ratio: never read).
type TableCache struct {
	Schema        string   `json:"schema"`
	Table         string   `json:"table"`
	DiskReads     int64    `json:"diskReads"`
	CacheHits     int64    `json:"cacheHits"`
	CacheHitRatio *float64 `json:"cacheHitRatio"`
}

// IndexCache is one index's cache hits.
type IndexCache struct {
	Schema        string   `json:"schema"`
	Table         string   `json:"table"`
	Index         string   `json:"index"`
	DiskReads     int64    `json:"diskReads"`
	CacheHits     int64    `json:"cacheHits"`
	CacheHitRatio *float64 `json:"cacheHitRatio"`
}

// CacheSummary sums the cache hits of the schema's tables and indexes.
type CacheSummary struct {
	Tables  CacheTotals `json:"tables"`
	Indexes CacheTotals `json:"indexes"`
}

// CacheTotals are summed cache hits and disk reads.
type CacheTotals struct {
	DiskReads int64    `json:"diskReads"`
	CacheHits int64    `json:"cacheHits"`
	HitRatio  *float64 `json:"hitRatio"`
}

// DeadTuples is a table with row versions vacuum has yet to reclaim.
type DeadTuples struct {
	Schema         string   `json:"schema"`
	Table          string   `json:"table"`
	DeadTuples     int64    `json:"deadTuples"`
	LiveTuples     int64    `json:"liveTuples"`
	DeadPercentage *float64 `json:"deadPercentage"`
	LastVacuum     *string  `json:"lastVacuum"`
	LastAutovacuum *string  `json:"lastAutovacuum"`
}

// HotUpdates is a table's updates and how many were heap-only.
type HotUpdates struct {
	Schema              string   `json:"schema"`
	Table               string   `json:"table"`
	TotalUpdates        int64    `json:"totalUpdates"`
	HotUpdates          int64    `json:"hotUpdates"`
	HotUpdatePercentage *float64 `json:"hotUpdatePercentage"`
}

// ActiveQuery is a statement running for more than a second.
type ActiveQuery struct {
	PID           int64   `json:"pid"`
	Duration      float64 `json:"duration"`
	State         *string `json:"state"`
	Query         string  `json:"query"`
	WaitEventType *string `json:"waitEventType"`
	WaitEvent     *string `json:"waitEvent"`
}

// AutovacuumStatus is a table with more than 1,000 dead tuples.
type AutovacuumStatus struct {
	Table            string  `json:"table"`
	LastAutovacuum   *string `json:"lastAutovacuum"`
	DeadTuples       int64   `json:"deadTuples"`
	AutovacuumCount  int64   `json:"autovacuumCount"`
	AutoanalyzeCount int64   `json:"autoanalyzeCount"`
}

// BufferConfig is shared_buffers, in 8 kB pages and readable.
type BufferConfig struct {
	SharedBuffers     string `json:"sharedBuffers"`
	SharedBuffersSize string `json:"sharedBuffersSize"`
}

// BufferUsage is one relation's share of the buffer cache.
type BufferUsage struct {
	Object         string  `json:"object"`
	BufferedSize   string  `json:"bufferedSize"`
	BufferedBytes  int64   `json:"bufferedBytes"`
	PercentOfCache float64 `json:"percentOfCache"`
}

// QueenTableSize is one lethe table in Queen's shape (its partitions
// summed), with its dead tuples, last autovacuum (the latest of its
// partitions') and a bloat estimate: the heap bytes that dead tuples take,
// by their share of the rows (pg_stat_all_tables; no pgstattuple).
type QueenTableSize struct {
	Table              string     `json:"table"`
	TotalSize          string     `json:"totalSize"`
	TotalSizeBytes     int64      `json:"totalSizeBytes"`
	TableSize          string     `json:"tableSize"`
	TableSizeBytes     int64      `json:"tableSizeBytes"`
	IndexSize          string     `json:"indexSize"`
	IndexSizeBytes     int64      `json:"indexSizeBytes"`
	DeadTuples         int64      `json:"deadTuples"`
	LastAutovacuum     *time.Time `json:"lastAutovacuum"`
	BloatEstimateBytes int64      `json:"bloatEstimateBytes"`
}

// TableSize is one relation of schema lethe and what it occupies.
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

package pgembed

// queueSettings are what the private server runs a queue with, unless
// Config.Settings says otherwise; docs/operations.md gives the same
// values for a PostgreSQL of your own.
//
// A queue writes each message once and deletes it soon after, so its WAL
// is nearly all of its write traffic and, on disk, often more than the
// data it describes (the default max_wal_size of 1 GB let the WAL folder
// reach 705 MB beside 100 MB of messages in the soak). WAL is kept
// on disk from the last checkpoint's start, plus recycled segments:
//   - max_wal_size 256MB caps that (a checkpoint starts once about
//     max_wal_size / (1 + checkpoint_completion_target), 135 MB, was
//     written since the last);
//   - checkpoint_timeout stays at PostgreSQL's 5min: below 27 MB of WAL
//     a minute (135 MB in 5 minutes; about 260 msg/s of 1 KiB) time
//     spaces checkpoints, above it max_wal_size does. Either way crash
//     recovery stays short, and since a page written once and deleted
//     once gets a full-page image whatever the spacing, more frequent
//     checkpoints would add little WAL;
//   - min_wal_size 64MB is the floor of recycled segments an idle queue
//     keeps (PostgreSQL's is 80MB);
//   - wal_compression on (pglz, in every PostgreSQL version lethe runs
//     on) compresses the full-page images of index and bookkeeping pages,
//     which shrink well; pages of incompressible payloads do not, and
//     cost the attempt: about a megabyte a second of images at the soak's
//     load, around a percent of a core (an estimate).
func queueSettings() map[string]string {
	return map[string]string{
		"max_wal_size":       "256MB",
		"min_wal_size":       "64MB",
		"checkpoint_timeout": "5min",
		"wal_compression":    "on",
	}
}

// keptClusterSettings apply to clusters that are not throwaway ones. The
// autovacuum launcher looks for work every autovacuum_naptime; at
// PostgreSQL's 1min the per-table thresholds of migration 090 cannot act
// sooner, and lethe.cursors, rewritten by every pop and ack, piles up a
// minute of dead rows. 15s checks four times as often, a cost a kept
// cluster with a few databases does not notice; test clusters (thousands
// of short-lived databases) keep the default.
func keptClusterSettings() map[string]string {
	return map[string]string{"autovacuum_naptime": "15s"}
}

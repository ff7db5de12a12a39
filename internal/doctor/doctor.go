// Package doctor checks a live deployment against the checkpoints that
// make retention trustworthy:
// every deleting job runs and leaves a record, every retention predicate
// has a valid index, vacuum can reclaim what deletes leave, the records
// themselves age out, nothing of lethe's is granted to PUBLIC, and no
// consumer group is about to lose messages it has not read. It reads
// catalogs and lethe's tables and changes nothing (GET
// /api/v1/doctor, `lethe doctor`).
package doctor

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lethe-mq/lethe/client/api"
)

// Querier is what the checks read through (a pool or a connection).
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// Config is what the checks compare the database with: the serving
// replica's retention settings and its clock.
type Config struct {
	Now time.Time
	// Interval is RETENTION_INTERVAL; BatchSize RETENTION_BATCH_SIZE.
	Interval  time.Duration
	BatchSize int
	// MetricsRetentionDays is METRICS_RETENTION_DAYS, Never (negative) or
	// 0 when the records are kept forever.
	MetricsRetentionDays int
	// KeepPartitions is LETHE_PARTITION_CLEANUP_ENABLED=false: partition cleanup off, so
	// the loop leaves no trace in lethe.settings to check it by.
	KeepPartitions bool
}

// check is one checkpoint.
type check struct {
	id, checkpoint string
	run            func(ctx context.Context, q Querier, cfg Config) (status, detail, fix string, err error)
}

// checks run in this order, the answer lists them in it.
var checks = []check{
	{"retention-loop", "the retention loop runs, in bounded steps, and records each cycle", checkLoop},
	{"retention-failures", "no retention cycle failed in the last 24 hours", checkFailures},
	{"retention-indexes", "an index exists, and is valid, on every column a retention predicate reads", checkIndexes},
	{"vacuum", "autovacuum can reclaim what deletes and updates leave in lethe's tables", checkVacuum},
	{"history-retention", "the retention records have a retention of their own and it keeps up", checkHistory},
	{"public-grants", "nothing of lethe's schema is granted to PUBLIC", checkGrants},
	{"unread-loss", "no consumer group is about to lose messages it has not read", checkLoss},
}

// Run runs every check. A check that could not read what it needs fails
// with the reason; the others still run.
func Run(ctx context.Context, q Querier, cfg Config) *api.DoctorReport {
	r := &api.DoctorReport{At: cfg.Now, Status: api.DoctorOK, Checks: make([]api.DoctorCheck, 0, len(checks))}
	for _, c := range checks {
		status, detail, fix, err := c.run(ctx, q, cfg)
		if err != nil {
			status, detail, fix = api.DoctorFail, fmt.Sprintf("could not be checked: %v", err),
				"make sure lethe's database user can read the catalogs (pg_catalog) and lethe's tables"
		}
		if status == api.DoctorOK {
			fix = ""
		}
		r.Checks = append(r.Checks, api.DoctorCheck{ID: c.id, Checkpoint: c.checkpoint, Status: status, Detail: detail, Fix: fix})
		r.Status = worse(r.Status, status)
	}
	return r
}

func worse(a, b string) string {
	rank := map[string]int{api.DoctorOK: 0, api.DoctorWarn: 1, api.DoctorFail: 2}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

package retention

import (
	"strings"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/client/api"
)

// doctorCheck runs the doctor and answers the check named id.
func (e *env) doctorCheck(id string) api.DoctorCheck {
	e.t.Helper()
	rep := e.svc.Doctor(e.ctx)
	for _, c := range rep.Checks {
		if c.ID == id {
			return c
		}
	}
	e.t.Fatalf("doctor has no check %q: %+v", id, rep)
	return api.DoctorCheck{}
}

func (e *env) mustExec(sql string, args ...any) {
	e.t.Helper()
	if _, err := e.pool.Exec(e.ctx, sql, args...); err != nil {
		e.t.Fatalf("%s: %v", sql, err)
	}
}

func wantCheck(t *testing.T, c api.DoctorCheck, status string, parts ...string) {
	t.Helper()
	if c.Status != status {
		t.Fatalf("check %s is %s, want %s: %s (fix: %s)", c.ID, c.Status, status, c.Detail, c.Fix)
	}
	for _, p := range parts {
		if !strings.Contains(c.Detail+" "+c.Fix, p) {
			t.Fatalf("check %s does not say %q: %s (fix: %s)", c.ID, p, c.Detail, c.Fix)
		}
	}
}

// A database as migrations leave it, after one cycle, passes every check:
// the schema grants PUBLIC nothing, every retention predicate has its
// index, the history ages out.
func TestDoctorPassesAFreshDeployment(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.pushSegment("orders", "p", 3)
	e.cycle()
	rep := e.svc.Doctor(e.ctx)
	if rep.Status != api.DoctorOK || len(rep.Checks) != 7 {
		t.Fatalf("doctor on a fresh deployment: %s with %d checks:\n%s", rep.Status, len(rep.Checks), describe(rep))
	}
	wantCheck(t, e.doctorCheck("retention-indexes"), api.DoctorOK, "segment leaves")
}

func describe(rep *api.DoctorReport) string {
	var b strings.Builder
	for _, c := range rep.Checks {
		b.WriteString(c.Status + " " + c.ID + ": " + c.Detail + " (fix: " + c.Fix + ")\n")
	}
	return b.String()
}

// The loop check dates the last cycle by the injected clock: none yet is a
// warning, one long ago a failure, a recent one ok.
func TestDoctorDatesTheLastCycle(t *testing.T) {
	t.Parallel()
	e := setup(t)
	wantCheck(t, e.doctorCheck("retention-loop"), api.DoctorWarn, "no replica has run a retention cycle")
	e.cycle()
	wantCheck(t, e.doctorCheck("retention-loop"), api.DoctorOK, "last cycle 0s ago", "at most 1000 rows")
	e.clock.Advance(time.Hour)
	wantCheck(t, e.doctorCheck("retention-loop"), api.DoctorFail, "since "+t0.Format(time.RFC3339), "nothing is being deleted")
	e.cycle()
	wantCheck(t, e.doctorCheck("retention-loop"), api.DoctorOK)
}

// A failed cycle of the last day is reported with its text; one older is
// not.
func TestDoctorReportsFailedCycles(t *testing.T) {
	t.Parallel()
	e := setup(t)
	wantCheck(t, e.doctorCheck("retention-failures"), api.DoctorOK)
	e.mustExec(`INSERT INTO lethe.retention_runs (started_at, elapsed_ms, queues, segments_deleted, frames_deleted, bytes_deleted, txns_purged, max_wait_evicted, partitions_deleted, subscriptions_deleted, metrics_purged, error) VALUES ($1, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 'step failed: disk full')`, t0.Add(-time.Hour))
	wantCheck(t, e.doctorCheck("retention-failures"), api.DoctorWarn, "1 cycles recorded failures", "disk full")
	e.clock.Advance(48 * time.Hour)
	wantCheck(t, e.doctorCheck("retention-failures"), api.DoctorOK)
}

// A missing or invalid index under a retention predicate fails the check,
// naming the table, the columns and the statement that mends it: for a
// table of the purge and for a segment leaf.
func TestDoctorFindsAMissingRetentionIndex(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.pushSegment("orders", "p", 1)
	wantCheck(t, e.doctorCheck("retention-indexes"), api.DoctorOK)

	e.mustExec(`DROP INDEX lethe.dead_letters_failed_at_idx`)
	wantCheck(t, e.doctorCheck("retention-indexes"), api.DoctorFail,
		"lethe.dead_letters (failed_at), read by DLQ_RETENTION_DAYS", "CREATE INDEX CONCURRENTLY ON lethe.dead_letters (failed_at);")
	e.mustExec(`CREATE INDEX dead_letters_failed_at_idx ON lethe.dead_letters (failed_at)`)
	wantCheck(t, e.doctorCheck("retention-indexes"), api.DoctorOK)

	var leaf, pkey string
	err := e.pool.QueryRow(e.ctx, `
		SELECT c.relname::text, i.indexrelid::regclass::text
		  FROM pg_partition_tree('lethe.segments') pt JOIN pg_class c ON c.oid = pt.relid
		  JOIN pg_index i ON i.indrelid = c.oid AND i.indisprimary
		 WHERE pt.isleaf AND EXISTS (SELECT 1 FROM lethe.segments s WHERE s.tableoid = c.oid)`).Scan(&leaf, &pkey)
	if err != nil {
		t.Fatalf("find the leaf holding the pushed segment: %v", err)
	}
	// An index left invalid, as a failed CREATE INDEX CONCURRENTLY leaves it.
	e.mustExec(`UPDATE pg_index SET indisvalid = false WHERE indexrelid = $1::regclass`, pkey)
	wantCheck(t, e.doctorCheck("retention-indexes"), api.DoctorFail, "lethe."+leaf+" (partition_id, base_offset)", "is invalid", "REINDEX INDEX CONCURRENTLY")
}

// Autovacuum turned off on one of lethe's tables fails the check.
func TestDoctorFindsAutovacuumOff(t *testing.T) {
	t.Parallel()
	e := setup(t)
	wantCheck(t, e.doctorCheck("vacuum"), api.DoctorOK)
	e.mustExec(`ALTER TABLE lethe.cursors SET (autovacuum_enabled = false)`)
	wantCheck(t, e.doctorCheck("vacuum"), api.DoctorFail, "turned off on 1 of lethe's tables: cursors", "RESET (autovacuum_enabled)")
}

// The records need a retention of their own, and the purge must keep up.
func TestDoctorChecksTheHistoryAgesOut(t *testing.T) {
	t.Parallel()
	e := setup(t)
	wantCheck(t, e.doctorCheck("history-retention"), api.DoctorOK, "after 90 days")
	e.mustExec(`INSERT INTO lethe.retention_runs (started_at, elapsed_ms, queues, segments_deleted, frames_deleted, bytes_deleted, txns_purged, max_wait_evicted, partitions_deleted, subscriptions_deleted, metrics_purged) VALUES ($1, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0)`, t0.Add(-100*24*time.Hour))
	wantCheck(t, e.doctorCheck("history-retention"), api.DoctorWarn, "behind its 90 days", "lethe.retention_runs holds a row")

	never := setup(t, func(c *Config) { c.MetricsRetentionDays = Never })
	wantCheck(t, never.doctorCheck("history-retention"), api.DoctorWarn, "METRICS_RETENTION_DAYS is off")
}

// Anything of lethe's granted to PUBLIC fails the check by name: a table
// and a function left with PostgreSQL's default EXECUTE for PUBLIC.
func TestDoctorFindsGrantsToPublic(t *testing.T) {
	t.Parallel()
	e := setup(t)
	wantCheck(t, e.doctorCheck("public-grants"), api.DoctorOK)
	e.mustExec(`GRANT SELECT ON lethe.queues TO PUBLIC`)
	e.mustExec(`CREATE FUNCTION lethe.doctor_probe() RETURNS int LANGUAGE sql AS 'SELECT 1'`)
	wantCheck(t, e.doctorCheck("public-grants"), api.DoctorFail,
		"table lethe.queues (SELECT)", "function lethe.doctor_probe()", "REVOKE ALL ON ALL FUNCTIONS IN SCHEMA lethe FROM PUBLIC")
}

// The doctor warns of a group about to lose messages it has not read,
// naming it and when, and is quiet once the group has consumed them.
func TestDoctorWarnsOfAComingLoss(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.configure("ticks", map[string]any{"maxWaitTimeSeconds": 7200})
	e.pushSegment("ticks", "p", 3)
	e.pop("ticks", "p", "slow", 1) // leased: still unread
	wantCheck(t, e.doctorCheck("unread-loss"), api.DoctorOK, "no consumer group loses")
	e.clock.Advance(90 * time.Minute)
	wantCheck(t, e.doctorCheck("unread-loss"), api.DoctorWarn, "ticks/slow in 30m0s by maxWaitTimeSeconds", "lethe lag")
	e.clock.Advance(time.Hour)
	wantCheck(t, e.doctorCheck("unread-loss"), api.DoctorWarn, "ticks/slow now (the next cycle deletes)")
	e.consume("ticks", "p", "slow", 3)
	wantCheck(t, e.doctorCheck("unread-loss"), api.DoctorOK)
}

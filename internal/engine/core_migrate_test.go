package engine_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/clock"
	"github.com/lethe-mq/lethe/internal/engine"
	"github.com/lethe-mq/lethe/internal/frame"
	"github.com/lethe-mq/lethe/internal/pgtest"
	"github.com/lethe-mq/lethe/internal/queueopts"
	"github.com/lethe-mq/lethe/internal/schema"
	"github.com/lethe-mq/lethe/internal/schema/schematest"
	"github.com/lethe-mq/lethe/internal/store"
)

// migrateBefore applies the migrations of the replaced chain before
// version, as a database in the field has them.
func migrateBefore(t *testing.T, pool *pgxpool.Pool, version int) {
	t.Helper()
	migrateWithout(t, pool, func(v int) bool { return v >= version })
}

// migrateWithout applies, in order, every migration of the replaced chain
// but those skip names: the schema of a database that never ran them.
func migrateWithout(t *testing.T, pool *pgxpool.Pool, skip func(version int) bool) {
	t.Helper()
	if err := schematest.ApplyLegacy(context.Background(), pool, func(v int) bool { return !skip(v) }); err != nil {
		t.Fatal(err)
	}
}

// migrateOldDatabase brings a database of the replaced chain to its last
// migration, as the release that carried it did at start, then migrates
// it as this lethe does (adoption).
func migrateOldDatabase(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	ctx := context.Background()
	if err := schematest.ApplyLegacy(ctx, pool, schematest.All); err != nil {
		t.Fatalf("replaced chain: %v", err)
	}
	if _, err := schema.Migrate(ctx, pool); err != nil {
		t.Fatalf("migrate: %v", err)
	}
}

// Leases live when migration 021 runs carry over: the consumer holding one
// acks it and the group moves on; a lease holding no message any more is
// released.
func TestCoreMigration021CarriesLeasesOver(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, pgtest.NewEmptyDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	migrateBefore(t, pool, 20)
	pid, leaseID := uuid.New(), uuid.New()
	// Offsets 0-2 stored; an old-shape lease from 0 to 3 whose offset 1
	// was a retention gap ('') and offset 0 already acked.
	var blob []byte
	var hashes []int64
	var lens []int32
	for _, txn := range []string{"t0", "t1", "t2"} {
		f := frame.Encode(frame.Message{CreatedAt: coreT0, TxnID: txn, Payload: []byte(`1`)})
		blob, hashes, lens = append(blob, f...), append(hashes, store.TxnHash(txn)), append(lens, int32(len(f)))
	}
	_, err = pool.Exec(ctx, `
		WITH q AS (INSERT INTO lethe.queues (name, created_at, updated_at) VALUES ('old', $1, $1) RETURNING id)
		INSERT INTO lethe.partitions (id, queue_id, name, created_at) SELECT $2, id, 'Default', $1 FROM q`,
		coreT0, pid)
	if err == nil {
		_, err = pool.Exec(ctx, `SELECT * FROM lethe.append($1, $2, $3, $4, $5, $5, $5)`, pid, hashes, lens, blob, coreT0)
	}
	if err == nil {
		_, err = pool.Exec(ctx, `
			INSERT INTO lethe.cursors (partition_id, group_name, committed, lease_id, lease_from, lease_to, lease_until,
			                           lease_txns, lease_done, updated_at)
			VALUES ($1, 'g', -1, $2, 0, 3, $3, '{t0,"",t2,""}', '{0,1,3}', $3),
			       ($1, 'gone', -1, $4, 0, 1, $3, '{"",""}', '{}', $3)`, pid, leaseID, coreT0.Add(30*time.Second), uuid.New())
	}
	if err != nil {
		t.Fatal(err)
	}
	migrateOldDatabase(t, pool)
	eng := engine.New(pool, engine.Config{Clock: clock.NewFake(coreT0), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	t.Cleanup(eng.Close)
	res, err := eng.Ack(ctx, []api.AckRequest{{TransactionID: "t2", PartitionID: pid.String(), LeaseID: leaseID.String(), ConsumerGroup: "g"}}, "")
	if err != nil || !res[0].Success || !res[0].LeaseReleased {
		t.Fatalf("ack of the carried-over lease = %+v, %v; want success, lease released", res, err)
	}
	var committed int64
	var goneLease *uuid.UUID
	if err := pool.QueryRow(ctx, `SELECT (SELECT committed FROM lethe.cursors WHERE group_name = 'g'),
		(SELECT lease_id FROM lethe.cursors WHERE group_name = 'gone')`).Scan(&committed, &goneLease); err != nil {
		t.Fatal(err)
	}
	if committed != 2 || goneLease != nil {
		t.Errorf("after the ack: committed %d (want 2); the empty lease %v (want released)", committed, goneLease)
	}
}

// Queen's ttl default (3600) was stored on every queue and enforced by
// nothing; migration 072 resets it, so enforcing ttl hides nothing on
// upgrade. Other options keep what was stored.
func TestCoreMigration072ResetsTheUnenforcedTTL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, pgtest.NewEmptyDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	migrateBefore(t, pool, 72)
	_, err = pool.Exec(ctx, `INSERT INTO lethe.queues (name, options, created_at, updated_at)
		VALUES ('old', '{"ttl": 3600, "maxSize": 7, "leaseTime": 300}', $1, $1), ('bare', '{}', $1, $1)`, coreT0)
	if err != nil {
		t.Fatal(err)
	}
	migrateOldDatabase(t, pool)
	eng := engine.New(pool, engine.Config{Clock: clock.NewFake(coreT0), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	t.Cleanup(eng.Close)
	q, err := queueopts.New(eng).Get(ctx, "old")
	if err != nil || q.Options.TTL != 0 || q.Options.MaxSize != 7 {
		t.Errorf("after 072: %+v, %v; want ttl 0 and maxSize 7 kept", q.Options, err)
	}
}

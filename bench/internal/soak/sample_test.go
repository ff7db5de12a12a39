package soak

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lethe-mq/lethe/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// A sample reads every table of schema lethe; a partitioned one is the sum
// of its leaves, listed under it wherever they live.
func TestSampleSumsPartitions(t *testing.T) {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	_, err = pool.Exec(ctx, `
		CREATE TABLE lethe.zz_parted (k int NOT NULL, v text) PARTITION BY RANGE (k);
		CREATE SCHEMA zz_parts;
		CREATE TABLE zz_parts.low PARTITION OF lethe.zz_parted FOR VALUES FROM (0) TO (1000);
		CREATE TABLE lethe.zz_high PARTITION OF lethe.zz_parted FOR VALUES FROM (1000) TO (2000);
		CREATE INDEX ON lethe.zz_parted (k);
		INSERT INTO lethe.zz_parted SELECT i, repeat('x', 3000) FROM generate_series(0, 1999) i`)
	if err != nil {
		t.Fatal(err)
	}
	smp := &sampler{pool: pool}
	s, err := smp.take(ctx, time.Now().Add(-time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	p, ok := s.Table("lethe.zz_parted")
	if !ok || len(p.Partitions) != 2 {
		t.Fatalf("partitioned table: %+v, want it with its 2 partitions", p)
	}
	var sum int64
	for _, leaf := range p.Partitions {
		if leaf.Heap == 0 || leaf.Index == 0 {
			t.Errorf("partition %s: heap %d, indexes %d; want both measured", leaf.Name, leaf.Heap, leaf.Index)
		}
		sum += leaf.Total
	}
	if p.Total != sum || p.Total != p.Heap+p.Toast+p.Index {
		t.Errorf("total %d, partitions sum to %d, forks to %d", p.Total, sum, p.Heap+p.Toast+p.Index)
	}
	if _, ok := s.Table("lethe.zz_high"); ok {
		t.Error("a partition is listed as a table of its own")
	}
	seg, ok := s.Table("lethe.segments")
	if !ok || seg.Heap != 0 || len(seg.Partitions) != 0 {
		t.Errorf("lethe.segments: %+v, %v; want an empty plain table", seg, ok)
	}
	if s.DatabaseBytes == 0 || s.WALError != "" || s.WALBytes == 0 || s.WALPosition == 0 || s.Elapsed < 59 {
		t.Errorf("sample: database %d, WAL %d (%q), position %d, elapsed %.0f", s.DatabaseBytes, s.WALBytes, s.WALError, s.WALPosition, s.Elapsed)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO lethe.zz_parted VALUES (5, 'more')`); err != nil {
		t.Fatal(err)
	}
	s2, err := smp.take(ctx, time.Now())
	if err != nil || s2.WALWritten <= 0 {
		t.Errorf("second sample: WAL written %d (%v), want the delta since the first", s2.WALWritten, err)
	}
}

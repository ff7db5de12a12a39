package lethebench

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/bench/internal/meter"
	"github.com/lethe-mq/lethe/bench/internal/payload"
	"github.com/lethe-mq/lethe/internal/frame"
)

// backlog describes messages written straight into lethe's tables (COPY of
// segment rows and their sidecar hashes), exactly as lethe's append leaves
// the messages of a producer that names their transaction ids, so millions
// of messages exist in seconds instead of minutes of HTTP. The queue is created through the API; its partitions, segments and
// hashes by SQL.
type backlog struct {
	Queue      string
	Partitions int
	Frames     int // in total, spread evenly
	PerSegment int
	Size       int
	At         time.Time // frame and push time
	// Hashes writes the transaction-id hash sidecar too, as a push would.
	// An old backlog has none: the loop purges hashes after 15 minutes.
	Hashes bool
	// Options configure the queue (its retentionTier, requiredGroups); the
	// segments go to the queue's tier, in the leaf of At.
	Options map[string]any
	tier    string
}

// txnHash is the engine's sidecar key: the first 8 bytes of SHA-256.
func txnHash(txnID string) int64 {
	sum := sha256.Sum256([]byte(txnID))
	return int64(binary.BigEndian.Uint64(sum[:8]))
}

// write creates the queue and fills it, printing progress. It returns the
// partition ids.
func (b backlog) write(ctx context.Context, env *Env) ([]uuid.UUID, error) {
	c := newClient(env.URL, 1)
	defer c.close()
	opts := b.Options
	if opts == nil {
		opts = map[string]any{}
	}
	if err := c.configure(ctx, b.Queue, opts); err != nil {
		return nil, fmt.Errorf("create queue %s: %w", b.Queue, err)
	}
	var queueID int64
	if err := env.Pool.QueryRow(ctx, `SELECT id, retention_tier FROM lethe.queues WHERE name = $1`, b.Queue).
		Scan(&queueID, &b.tier); err != nil {
		return nil, fmt.Errorf("look up queue %s: %w", b.Queue, err)
	}
	// The leaves the rows go to, as an append would create them.
	if _, err := env.Pool.Exec(ctx, `SELECT lethe.ensure_leaf($1, $3), lethe.ensure_leaf('txns', $3), lethe.ensure_leaf($2, $3)`,
		b.tier, "held", b.At); err != nil {
		return nil, fmt.Errorf("create the leaves of %s: %w", b.Queue, err)
	}
	pids := make([]uuid.UUID, b.Partitions)
	for i := range pids {
		pids[i] = uuid.New()
		if _, err := env.Pool.Exec(ctx, `INSERT INTO lethe.partitions (id, queue_id, name, created_at) VALUES ($1, $2, $3, $4)`,
			pids[i], queueID, partitionName(i), b.At); err != nil {
			return nil, fmt.Errorf("create partition %d of %s: %w", i, b.Queue, err)
		}
	}
	pool := payload.Pool(uint64(b.Frames), 4096, b.Size)
	var written atomic.Int64
	prog := meter.StartProgress(env.Out, "backlog "+b.Queue, func() string {
		return fmt.Sprintf("%s of %s frames written", meter.Group(written.Load()), meter.Group(int64(b.Frames)))
	})
	defer prog.Stop()
	workers := min(8, b.Partitions)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := w; p < b.Partitions; p += workers {
				n := b.Frames / b.Partitions
				if p < b.Frames%b.Partitions {
					n++
				}
				if err := b.fillPartition(ctx, env, pids[p], p, n, pool, &written); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return pids, <-errs
}

// fillPartition writes n frames to one partition, a few segments per
// transaction.
func (b backlog) fillPartition(ctx context.Context, env *Env, pid uuid.UUID, p, n int, pool [][]byte, written *atomic.Int64) error {
	segmentsPerTx := max(1, 8000/b.PerSegment) // about 8,000 frames a transaction
	prefix := "bk-" + strconv.Itoa(p) + "-"
	offset := 0
	for offset < n {
		var segRows, txnRows [][]any
		from := offset
		for s := 0; s < segmentsPerTx && offset < n; s++ {
			count := min(b.PerSegment, n-offset)
			var blob []byte
			var hashes []int64
			for i := range count {
				txn := prefix + strconv.Itoa(offset+i)
				blob = frame.Append(blob, frame.Message{CreatedAt: b.At, TxnID: txn, Payload: pool[(offset+i+p*131)%len(pool)]})
				hashes = append(hashes, txnHash(txn))
			}
			if b.Hashes {
				// One sidecar row per segment, as lethe.append writes it.
				txnRows = append(txnRows, []any{pid, int64(offset), b.At, hashes})
			}
			segRows = append(segRows, []any{pid, int64(offset), int64(offset + count - 1), count, b.At, b.At, len(blob), blob,
				b.tier, b.At})
			offset += count
		}
		err := pgx.BeginFunc(ctx, env.Pool, func(tx pgx.Tx) error {
			if _, err := tx.CopyFrom(ctx, pgx.Identifier{"lethe", "segments"},
				[]string{"partition_id", "base_offset", "last_offset", "frame_count", "first_at", "last_at", "byte_size", "frames",
					"tier", "appended_at"},
				pgx.CopyFromRows(segRows)); err != nil {
				return fmt.Errorf("copy segments: %w", err)
			}
			if len(txnRows) > 0 {
				if _, err := tx.CopyFrom(ctx, pgx.Identifier{"lethe", "txns"},
					[]string{"partition_id", "base_offset", "created_at", "hashes"}, pgx.CopyFromRows(txnRows)); err != nil {
					return fmt.Errorf("copy transaction hashes: %w", err)
				}
			}
			_, err := tx.Exec(ctx, `UPDATE lethe.partitions SET next_offset = $2, last_push_at = $3 WHERE id = $1`, pid, int64(offset), b.At)
			return err
		})
		if err != nil {
			return fmt.Errorf("backlog %s partition %d: %w", b.Queue, p, err)
		}
		written.Add(int64(offset - from))
	}
	return nil
}

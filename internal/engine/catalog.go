package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lethe-mq/lethe/internal/clock"
	"github.com/lethe-mq/lethe/internal/lease"
	"github.com/lethe-mq/lethe/internal/store"
)

// queueInfoTTL bounds how stale a replica's view of a queue's options may be
// after another replica reconfigures it.
const queueInfoTTL = time.Second

// Queue is what the hot paths need to know about a queue.
type Queue struct {
	ID                int64
	Name              string
	LeaseTime         int
	RetryLimit        int
	RetryDelay        time.Duration
	DelayedProcessing int
	WindowBuffer      int
	// TTL (seconds, 0: none): older messages are never delivered.
	TTL int
	// MaxSize (0: none) bounds the messages waiting in queue mode.
	MaxSize int
	// Encrypted: payloads are sealed at rest (encryptionEnabled).
	Encrypted bool

	loadedAt time.Time
}

// policy is what the queue's options say about delivery.
func (q *Queue) policy() lease.Policy {
	return lease.Policy{
		LeaseTime:    time.Duration(q.LeaseTime) * time.Second,
		RetryLimit:   q.RetryLimit,
		RetryDelay:   q.RetryDelay,
		WindowBuffer: time.Duration(q.WindowBuffer) * time.Second,
	}
}

// catalog caches queue and partition ids so a push costs no lookups. Entries
// can go stale when a queue is deleted or a partition cleaned up; the append
// path notices (the partition row is gone) and calls forget.
type catalog struct {
	pool  *pgxpool.Pool
	clock clock.Clock
	// tier and quarantined are the server's defaults for a queue its first
	// push creates.
	tier, quarantined string

	mu         sync.Mutex
	queues     map[string]*Queue
	partitions map[partKey]uuid.UUID
}

type partKey struct{ queue, partition string }

func newCatalog(pool *pgxpool.Pool, clk clock.Clock, tier, quarantined string) *catalog {
	return &catalog{pool: pool, clock: clk, tier: tier, quarantined: quarantined,
		queues: map[string]*Queue{}, partitions: map[partKey]uuid.UUID{}}
}

// queue returns the named queue, or nil when it does not exist.
func (c *catalog) queue(ctx context.Context, name string) (*Queue, error) {
	c.mu.Lock()
	q := c.queues[name]
	c.mu.Unlock()
	if q != nil && time.Since(q.loadedAt) < queueInfoTTL {
		return q, nil
	}
	r, err := store.LoadQueue(ctx, c.pool, name)
	q = &Queue{Name: name, ID: r.ID, LeaseTime: r.LeaseTime, RetryLimit: r.RetryLimit,
		RetryDelay: time.Duration(r.RetryDelayMs) * time.Millisecond, DelayedProcessing: r.DelayedProcessing,
		WindowBuffer: r.WindowBuffer, TTL: r.TTL, MaxSize: r.MaxSize, Encrypted: r.Encrypted}
	if errors.Is(err, pgx.ErrNoRows) {
		c.forgetQueue(name)
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load queue %s: %w", name, err)
	}
	q.loadedAt = time.Now()
	c.mu.Lock()
	c.queues[name] = q
	c.mu.Unlock()
	return q, nil
}

// ensureQueue returns the queue, creating it with default options.
func (c *catalog) ensureQueue(ctx context.Context, name string) (*Queue, error) {
	q, err := c.queue(ctx, name)
	if err != nil || q != nil {
		return q, err
	}
	now := c.clock.Now()
	if err := store.CreateQueue(ctx, c.pool, name, now, c.tier, c.quarantined); err != nil {
		return nil, fmt.Errorf("create queue %s: %w", name, err)
	}
	q, err = c.queue(ctx, name)
	if err == nil && q == nil {
		err = fmt.Errorf("create queue %s: deleted while being created", name)
	}
	return q, err
}

// ensurePartition returns the partition's id, creating queue and partition
// on first use.
func (c *catalog) ensurePartition(ctx context.Context, queue, partition string) (uuid.UUID, error) {
	key := partKey{queue, partition}
	c.mu.Lock()
	id, ok := c.partitions[key]
	c.mu.Unlock()
	if ok {
		return id, nil
	}
	q, err := c.ensureQueue(ctx, queue)
	if err != nil {
		return uuid.Nil, err
	}
	id, err = c.insertPartition(ctx, c.pool, q.ID, partition)
	if err != nil {
		// The queue may have been deleted since we cached it.
		c.forgetQueue(queue)
		return uuid.Nil, fmt.Errorf("create partition %s/%s: %w", queue, partition, err)
	}
	c.remember(queue, partition, id)
	return id, nil
}

// insertPartition creates the partition of queue qid, or finds it when it
// exists, and returns its id.
func (c *catalog) insertPartition(ctx context.Context, q store.Querier, qid int64, partition string) (id uuid.UUID, err error) {
	// When a concurrent first push inserts the same partition, our INSERT
	// skips it but our snapshot cannot see it yet: the next statement can.
	for attempt := 0; attempt < 3; attempt++ {
		id, err = store.EnsurePartition(ctx, q, uuid.New(), qid, partition, c.clock.Now())
		if !errors.Is(err, pgx.ErrNoRows) {
			break
		}
	}
	return id, err
}

// ensurePartitionIn is ensurePartition inside tx: rows it creates commit or
// roll back with tx, so nothing is cached here; the caller remembers the
// id once tx committed.
func (c *catalog) ensurePartitionIn(ctx context.Context, tx pgx.Tx, queue, partition string) (uuid.UUID, error) {
	c.mu.Lock()
	id, ok := c.partitions[partKey{queue, partition}]
	c.mu.Unlock()
	if ok {
		return id, nil
	}
	var qid int64
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		now := c.clock.Now()
		qid, err = store.EnsureQueue(ctx, tx, queue, now, c.tier, c.quarantined)
		if !errors.Is(err, pgx.ErrNoRows) {
			break
		}
	}
	if err != nil {
		return uuid.Nil, fmt.Errorf("create queue %s: %w", queue, err)
	}
	if id, err = c.insertPartition(ctx, tx, qid, partition); err != nil {
		return uuid.Nil, fmt.Errorf("create partition %s/%s: %w", queue, partition, err)
	}
	return id, nil
}

// remember caches a partition's id.
func (c *catalog) remember(queue, partition string, id uuid.UUID) {
	c.mu.Lock()
	c.partitions[partKey{queue, partition}] = id
	c.mu.Unlock()
}

// partitionID looks a partition up without creating it.
func (c *catalog) partitionID(ctx context.Context, q *Queue, partition string) (uuid.UUID, bool, error) {
	key := partKey{q.Name, partition}
	c.mu.Lock()
	id, ok := c.partitions[key]
	c.mu.Unlock()
	if ok {
		return id, true, nil
	}
	id, err := store.PartitionID(ctx, c.pool, q.ID, partition)
	if errors.Is(err, pgx.ErrNoRows) {
		return uuid.Nil, false, nil
	}
	if err != nil {
		return uuid.Nil, false, fmt.Errorf("look up partition %s/%s: %w", q.Name, partition, err)
	}
	c.mu.Lock()
	c.partitions[key] = id
	c.mu.Unlock()
	return id, true, nil
}

func (c *catalog) forgetPartition(queue, partition string) {
	c.mu.Lock()
	delete(c.partitions, partKey{queue, partition})
	c.mu.Unlock()
}

// forgetQueue drops a queue and its partitions from the cache.
func (c *catalog) forgetQueue(queue string) {
	c.mu.Lock()
	delete(c.queues, queue)
	for k := range c.partitions {
		if k.queue == queue {
			delete(c.partitions, k)
		}
	}
	c.mu.Unlock()
}

// Forget drops every cached id, for callers that deleted rows behind the
// engine's back (queue deletion, partition cleanup).
func (e *Engine) Forget(queue string) {
	if queue == "" {
		e.catalog.mu.Lock()
		e.catalog.queues = map[string]*Queue{}
		e.catalog.partitions = map[partKey]uuid.UUID{}
		e.catalog.mu.Unlock()
		return
	}
	e.catalog.forgetQueue(queue)
}

// ForgetQueueOptions drops the queue's cached options, after its
// configuration changed; its partitions' ids stay cached.
func (e *Engine) ForgetQueueOptions(queue string) {
	e.catalog.mu.Lock()
	delete(e.catalog.queues, queue)
	e.catalog.mu.Unlock()
}

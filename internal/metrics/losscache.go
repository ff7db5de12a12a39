package metrics

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// lossKey names one consumer group on one queue.
type lossKey struct {
	queue int64
	group string
}

// lossCache keeps the last loss times read (lossSQL) for lossRefresh, so
// scrapes in between do not read lethe.group_loss again. Queues it has not
// read yet make it read at once.
type lossCache struct {
	mu     sync.Mutex // held across the read: concurrent scrapes read once
	readAt time.Time
	queues []int64 // sorted
	at     map[lossKey]float64
}

// read answers the loss times of the groups of queues, from the last read
// when it is fresh and covered them.
func (c *lossCache) read(ctx context.Context, pool *pgxpool.Pool, now time.Time, queues []int64) (map[lossKey]float64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at != nil && now.Sub(c.readAt) < lossRefresh && now.Sub(c.readAt) >= 0 && c.covers(queues) {
		return c.at, nil
	}
	rows, err := pool.Query(ctx, lossSQL, queues)
	if err != nil {
		return nil, err
	}
	at := map[lossKey]float64{}
	for rows.Next() {
		var k lossKey
		var v float64
		if err := rows.Scan(&k.queue, &k.group, &v); err != nil {
			rows.Close()
			return nil, err
		}
		at[k] = v
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	c.at, c.readAt = at, now
	c.queues = slices.Sorted(slices.Values(queues))
	return at, nil
}

// covers says the last read included every one of queues.
func (c *lossCache) covers(queues []int64) bool {
	for _, q := range queues {
		if _, ok := slices.BinarySearch(c.queues, q); !ok {
			return false
		}
	}
	return true
}

package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/client/api"
)

// Subscription modes, as stored. A pop's subscriptionMode "new" registers
// SubscriptionNew; any other value registers SubscriptionAll.
const (
	SubscriptionAll = "all"
	SubscriptionNew = "new"
)

// subscription returns where the group's cursors on q start (nil: at the
// oldest retained message), registering the group on its first pop. Mode and
// from only matter then; later pops keep what was registered. Queue mode
// ignores both and starts at the oldest message, as Queen does.
func (e *Engine) subscription(ctx context.Context, q *Queue, group, mode, from string, now time.Time) (*time.Time, error) {
	if group == api.QueueModeGroup {
		mode, from = "", ""
	}
	key := subKey{q.ID, group}
	e.subsMu.Lock()
	cached, ok := e.subs[key]
	e.subsMu.Unlock()
	if ok && time.Since(cached.loadedAt) < queueInfoTTL {
		return cached.fromAt, nil
	}
	fromAt, err := e.loadSubscription(ctx, q, group, mode, from, now)
	if err != nil {
		return nil, err
	}
	e.subsMu.Lock()
	if len(e.subs) > 100_000 {
		e.subs = map[subKey]cachedSub{} // bound the cache; it refills on demand
	}
	e.subs[key] = cachedSub{fromAt: fromAt, loadedAt: time.Now()}
	e.subsMu.Unlock()
	return fromAt, nil
}

type subKey struct {
	queueID int64
	group   string
}

// cachedSub spares a pop the subscription lookup; changes made through
// another replica (seek, subscription updates) show within queueInfoTTL.
type cachedSub struct {
	fromAt   *time.Time
	loadedAt time.Time
}

// ForgetSubscriptions drops cached subscriptions, for callers that changed
// them (seek, subscription updates, group deletion).
func (e *Engine) ForgetSubscriptions() {
	e.subsMu.Lock()
	e.subs = map[subKey]cachedSub{}
	e.subsMu.Unlock()
}

func (e *Engine) loadSubscription(ctx context.Context, q *Queue, group, mode, from string, now time.Time) (*time.Time, error) {
	var fromAt *time.Time
	err := e.pool.QueryRow(ctx, `SELECT from_at FROM lethe.subscriptions WHERE queue_id = $1 AND group_name = $2`,
		q.ID, group).Scan(&fromAt)
	if err == nil {
		return fromAt, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("load subscription %s/%s: %w", q.Name, group, err)
	}
	storedMode := SubscriptionAll
	switch {
	case from == "now" || mode == SubscriptionNew:
		storedMode, fromAt = SubscriptionNew, &now
	case from != "":
		t, err := time.Parse(time.RFC3339Nano, from)
		if err != nil {
			return nil, invalidf("subscriptionFrom must be \"now\" or an RFC 3339 time, got %q", from)
		}
		storedMode, fromAt = "timestamp", &t
	}
	_, err = e.pool.Exec(ctx, `
		INSERT INTO lethe.subscriptions (queue_id, group_name, mode, from_at, created_at)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`, q.ID, group, storedMode, fromAt, now)
	if err != nil {
		return nil, fmt.Errorf("register subscription %s/%s: %w", q.Name, group, err)
	}
	// Another replica may have registered it first; its row wins.
	err = e.pool.QueryRow(ctx, `SELECT from_at FROM lethe.subscriptions WHERE queue_id = $1 AND group_name = $2`,
		q.ID, group).Scan(&fromAt)
	if err != nil {
		return nil, fmt.Errorf("load subscription %s/%s: %w", q.Name, group, err)
	}
	return fromAt, nil
}

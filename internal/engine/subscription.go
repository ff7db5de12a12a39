package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/store"
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
	fromAt, err := store.SubscriptionFrom(ctx, e.pool, q.ID, group)
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
	if err := store.Subscribe(ctx, e.pool, q.ID, group, storedMode, fromAt, now); err != nil {
		return nil, fmt.Errorf("register subscription %s/%s: %w", q.Name, group, err)
	}
	// Another replica may have registered it first; its row wins.
	fromAt, err = store.SubscriptionFrom(ctx, e.pool, q.ID, group)
	if err != nil {
		return nil, fmt.Errorf("load subscription %s/%s: %w", q.Name, group, err)
	}
	return fromAt, nil
}

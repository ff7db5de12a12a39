package queueopts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/apierr"
	"github.com/lethe-mq/lethe/internal/tier"
	"github.com/lethe-mq/lethe/internal/validate"
)

// States of a tier change (lethe.retention_changes), and Queued for a
// value that waits behind a running change.
const (
	ChangeAwaitingConfirm = "awaiting_confirm"
	ChangeRunning         = "running"
	ChangeQueued          = "queued"
	ChangeDone            = "done"
)

// ErrNothingToConfirm answers a confirm of a queue with no change awaiting
// confirmation.
var ErrNothingToConfirm = fmt.Errorf("%w: no retention change awaits confirmation", apierr.NotFound)

// Defaults are a new queue's options: Queen's defaults with the server's
// tier and quarantined defaults.
func (s *Service) Defaults() api.QueueOptions {
	o := api.DefaultQueueOptions()
	o.RetentionTier, o.Quarantined = s.eng.QueueDefaults()
	return o
}

// normalizeTierOptions checks retentionTier, quarantined and
// requiredGroups and writes them in their canonical form: a tier's day
// spelling becomes its week one, groups are sorted without repeats.
func normalizeTierOptions(o *api.QueueOptions, raw json.RawMessage) error {
	// Named, they must hold a value: "" is neither a tier nor a policy.
	if o.RetentionTier != "" || namesOption(raw, "retentionTier") {
		t, err := tier.Parse(o.RetentionTier)
		if err != nil {
			return apierr.Field(apierr.Invalid, "options.retentionTier", "options.%v", err)
		}
		o.RetentionTier = string(t)
	}
	if o.Quarantined != "" || namesOption(raw, "quarantined") {
		q, err := tier.ParseQuarantined(o.Quarantined)
		if err != nil {
			return apierr.Field(apierr.Invalid, "options.quarantined", "options.%v", err)
		}
		o.Quarantined = string(q)
	}
	// Only a list the request names: a queue keeps the groups it has.
	if namesOption(raw, "requiredGroups") {
		if err := validate.List("options.requiredGroups", len(o.RequiredGroups), validate.RequiredGroupsMax); err != nil {
			return err
		}
	}
	for i, g := range o.RequiredGroups {
		if err := validate.Name(fmt.Sprintf("options.requiredGroups[%d]", i), g); err != nil {
			return err
		}
	}
	slices.Sort(o.RequiredGroups)
	o.RequiredGroups = slices.Compact(o.RequiredGroups)
	return nil
}

// namesOption reports whether the configure options name key.
func namesOption(raw json.RawMessage, key string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return false
	}
	_, ok := m[key]
	return ok
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// tierApplied is lethe.request_tier's outcome for a tier set at once with
// nothing to settle.
const tierApplied = "applied"

// requestTier asks lethe.request_tier for queue qid to have tier t, on
// tx, and answers its outcome and the change it left (nil when the tier
// changed with nothing to move, or did not change).
func requestTier(ctx context.Context, tx pgx.Tx, qid int64, queue, t string, now time.Time) (string, *api.RetentionChange, error) {
	var outcome string
	var from, to, state *string
	var del, delB, mov, movB, hold, holdB *int64
	err := tx.QueryRow(ctx, `SELECT outcome, from_tier, to_tier, state, delete_messages, delete_bytes,
		move_messages, move_bytes, hold_messages, hold_bytes FROM lethe.request_tier($1, $2, $3)`, qid, t, now).
		Scan(&outcome, &from, &to, &state, &del, &delB, &mov, &movB, &hold, &holdB)
	if err != nil {
		return "", nil, fmt.Errorf("request tier %s: %w", t, err)
	}
	if state == nil {
		return outcome, nil, nil
	}
	c := &api.RetentionChange{Queue: queue, From: *from, To: *to, State: *state, RequestedAt: now,
		Delete: api.Amount{Messages: *del, Bytes: *delB}, Move: api.Amount{Messages: *mov, Bytes: *movB},
		Hold: api.Amount{Messages: *hold, Bytes: *holdB}}
	if outcome == ChangeQueued {
		c.Next, c.State = t, ChangeQueued
	}
	return outcome, c, nil
}

// ConfirmTierChange applies the shortening awaiting confirmation on queue:
// the queue takes the new tier, and the retention loop settles its older
// data in the background (finished messages past the new window deleted,
// pending ones held, the rest moved into the new tier). It answers the
// change with what it will do, counted now.
func (s *Service) ConfirmTierChange(ctx context.Context, queue string) (*api.RetentionChange, error) {
	now := s.clock.Now()
	var c *api.RetentionChange
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var qid int64
		if err := tx.QueryRow(ctx, `SELECT id FROM lethe.queues WHERE name = $1`, queue).Scan(&qid); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return notFoundf("queue %q does not exist", queue)
			}
			return err
		}
		rows, err := tx.Query(ctx, `SELECT from_tier, to_tier, delete_messages, delete_bytes, move_messages,
			move_bytes, hold_messages, hold_bytes FROM lethe.confirm_tier($1, $2)`, qid, now)
		if err != nil {
			return err
		}
		c, err = pgx.CollectOneRow(rows, func(r pgx.CollectableRow) (*api.RetentionChange, error) {
			ch := &api.RetentionChange{Queue: queue, State: ChangeRunning, ConfirmedAt: &now}
			return ch, r.Scan(&ch.From, &ch.To, &ch.Delete.Messages, &ch.Delete.Bytes, &ch.Move.Messages,
				&ch.Move.Bytes, &ch.Hold.Messages, &ch.Hold.Bytes)
		})
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("%w on queue %q (a shorter retentionTier waits here until confirmed)", ErrNothingToConfirm, queue)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("confirm the retention change of %s: %w", queue, err)
	}
	s.eng.Forget(queue)
	s.log.Info("retention tier change confirmed", "queue", queue, "from", c.From, "to", c.To,
		"delete_messages", c.Delete.Messages, "move_messages", c.Move.Messages, "hold_messages", c.Hold.Messages)
	return c, nil
}

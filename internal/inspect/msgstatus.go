package inspect

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/client/api"
)

// Message statuses in the admin views. For one consumer group a message is
// dead (the group dead-lettered it), completed (the group's cursor is past
// it), processing (inside a live lease), expired (waiting, but older than
// the queue's ttl: it will be passed, never delivered) or pending. Overall
// it is the first of dead, processing, pending, expired that any group
// reports, else completed; a message no group has subscribed to yet is
// pending, or expired past the ttl. The names are api.Message*.

// partitionReaders is what decides message statuses on one partition: the
// cursors on it and the subscribed groups that have none yet.
type partitionReaders struct {
	label   *partitionLabel
	cursors []readerCursor
	pending []readerSub // subscribed, not started on this partition
	now     time.Time
}

type readerCursor struct {
	group      string
	committed  int64
	leaseFrom  int64
	leaseTo    int64
	leaseUntil *time.Time
}

type readerSub struct {
	group  string
	fromAt *time.Time
}

func (r *Reader) loadReaders(ctx context.Context, pid uuid.UUID) (*partitionReaders, error) {
	label, err := r.labelPartition(ctx, pid)
	if err != nil {
		return nil, err
	}
	pr := &partitionReaders{label: label, now: r.clock.Now()}
	rows, err := r.pool.Query(ctx, `
		SELECT group_name, committed, coalesce(lease_from, 0), coalesce(lease_to, -1), lease_until
		  FROM lethe.cursors WHERE partition_id = $1 ORDER BY group_name`, pid)
	if err != nil {
		return nil, fmt.Errorf("load cursors of %s: %w", pid, err)
	}
	pr.cursors, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (readerCursor, error) {
		var c readerCursor
		return c, row.Scan(&c.group, &c.committed, &c.leaseFrom, &c.leaseTo, &c.leaseUntil)
	})
	if err != nil {
		return nil, fmt.Errorf("load cursors of %s: %w", pid, err)
	}
	rows, err = r.pool.Query(ctx, `
		SELECT s.group_name, s.from_at FROM lethe.subscriptions s
		 WHERE s.queue_id = $1
		   AND NOT EXISTS (SELECT 1 FROM lethe.cursors c WHERE c.partition_id = $2 AND c.group_name = s.group_name)
		 ORDER BY s.group_name`, label.queueID, pid)
	if err != nil {
		return nil, fmt.Errorf("load subscriptions of %s: %w", label.queue, err)
	}
	pr.pending, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (readerSub, error) {
		var s readerSub
		return s, row.Scan(&s.group, &s.fromAt)
	})
	if err != nil {
		return nil, fmt.Errorf("load subscriptions of %s: %w", label.queue, err)
	}
	return pr, nil
}

// deadGroups maps offsets of pid in [from, to] to the groups that
// dead-lettered them.
func (r *Reader) deadGroups(ctx context.Context, pid uuid.UUID, from, to int64) (map[int64][]string, error) {
	rows, err := r.pool.Query(ctx, `
		SELECT msg_offset, group_name FROM lethe.dead_letters
		 WHERE partition_id = $1 AND msg_offset BETWEEN $2 AND $3`, pid, from, to)
	if err != nil {
		return nil, fmt.Errorf("load dead letters of %s: %w", pid, err)
	}
	out := map[int64][]string{}
	var off int64
	var group string
	_, err = pgx.ForEachRow(rows, []any{&off, &group}, func() error {
		out[off] = append(out[off], group)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load dead letters of %s: %w", pid, err)
	}
	return out, nil
}

// status returns the overall status of the message at offset and each
// group's view of it.
func (pr *partitionReaders) status(offset int64, createdAt time.Time, dead []string) (string, map[string]string) {
	groups := make(map[string]string, len(pr.cursors)+len(pr.pending))
	for _, c := range pr.cursors {
		switch {
		case offset <= c.committed:
			groups[c.group] = api.MessageCompleted
		case c.leaseUntil != nil && c.leaseUntil.After(pr.now) && offset >= c.leaseFrom && offset <= c.leaseTo:
			groups[c.group] = api.MessageProcessing
		default:
			groups[c.group] = api.MessagePending
		}
	}
	for _, s := range pr.pending {
		// A group subscribed after the message was written never reads it.
		if s.fromAt == nil || !createdAt.Before(*s.fromAt) {
			groups[s.group] = api.MessagePending
		}
	}
	for _, g := range dead {
		groups[g] = api.MessageDead
	}
	expired := pr.label.ttl > 0 && createdAt.Before(pr.now.Add(-pr.label.ttl))
	for g, st := range groups {
		if st == api.MessagePending && expired {
			groups[g] = api.MessageExpired
		}
	}
	rank := map[string]int{api.MessageDead: 4, api.MessageProcessing: 3, api.MessagePending: 2, api.MessageExpired: 1, api.MessageCompleted: 0}
	overall := api.MessagePending
	if expired {
		overall = api.MessageExpired
	}
	if len(groups) > 0 {
		overall = api.MessageCompleted
		for _, st := range groups {
			if rank[st] > rank[overall] {
				overall = st
			}
		}
	}
	return overall, groups
}

// normalizeMessageStatus maps a status filter, with Queen's spellings, onto
// lethe's.
func normalizeMessageStatus(s string) (string, error) {
	switch s {
	case "":
		return "", nil
	case api.MessagePending, api.MessageProcessing, api.MessageCompleted, api.MessageDead, api.MessageExpired:
		return s, nil
	case "dead_letter", "failed":
		return api.MessageDead, nil
	}
	return "", invalidf("status must be one of pending, processing, completed, dead, expired; got %q", s)
}

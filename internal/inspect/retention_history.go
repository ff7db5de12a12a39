package inspect

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lethe-mq/lethe/client/api"
)

// HistoryEntry is one audit row, in the API's wire type: what one rule
// deleted (or moved) in one queue in one cycle, over every partition the
// cycle touched (migration 110; rows written before it cover one step of
// one partition).
type HistoryEntry = api.RetentionHistoryEntry

// PartitionRange is what a row covered of one partition (deleted, or lost
// by a group), and GroupLoss what one consumer group had not consumed of a
// decision's deletions: the API's wire types.
type (
	PartitionRange = api.PartitionRange
	GroupLoss      = api.GroupLoss
)

// HistoryQuery filters the audit rows; zero values match everything.
type HistoryQuery struct {
	Queue string
	Rule  string
	From  time.Time
	To    time.Time
	// LostOnly keeps rows where some group lost unread messages.
	LostOnly bool
	Limit    int
}

// historySQL reads the decision rows with their loss rows
// (lethe.retention_losses); a row written before migration 110 carries
// its losses in its own lost column.
const historySQL = `
	SELECT h.id, h.executed_at, h.queue_name, h.partition_name, h.partition_id::text, h.rule, h.partitions,
	       h.segments, h.frames, h.bytes, h.from_offset, h.to_offset, h.ranges,
	       coalesce(h.lost, (
	           SELECT jsonb_agg(jsonb_build_object('group', l.group_name, 'messages', l.messages,
	                      'partitions', l.partitions, 'fromOffset', l.from_offset, 'toOffset', l.to_offset,
	                      'leased', l.leased, 'ranges', l.ranges)
	                      ORDER BY l.group_name)
	             FROM lethe.retention_losses l
	            WHERE l.executed_at = h.executed_at AND l.queue_name = h.queue_name AND l.rule = h.rule))
	  FROM lethe.retention_history h
	 WHERE ($1 = '' OR h.queue_name = $1) AND ($2 = '' OR h.rule = $2)
	   AND h.executed_at >= $3 AND h.executed_at <= $4
	   AND (NOT $5 OR h.lost IS NOT NULL
	        OR EXISTS (SELECT 1 FROM lethe.retention_losses l
	                    WHERE l.executed_at = h.executed_at AND l.queue_name = h.queue_name AND l.rule = h.rule))
	 ORDER BY h.executed_at DESC, h.id DESC
	 LIMIT $6`

// RetentionHistory returns the retention loop's audit rows, newest first
// (GET /api/v1/retention/history).
func (r *Reader) RetentionHistory(ctx context.Context, q HistoryQuery) ([]HistoryEntry, error) {
	rows, err := r.pool.Query(ctx, historySQL, q.Queue, q.Rule, q.From, q.To, q.LostOnly, q.Limit)
	if err != nil {
		return nil, fmt.Errorf("retention history: %w", err)
	}
	defer rows.Close()
	out := []HistoryEntry{}
	for rows.Next() {
		var e HistoryEntry
		var ranges, lost []byte
		if err := rows.Scan(&e.ID, &e.ExecutedAt, &e.Queue, &e.Partition, &e.PartitionID, &e.Rule, &e.Partitions,
			&e.Segments, &e.Messages, &e.Bytes, &e.FromOffset, &e.ToOffset, &ranges, &lost); err != nil {
			return nil, fmt.Errorf("retention history: %w", err)
		}
		if err := decodeHistory(&e, ranges, lost); err != nil {
			return nil, fmt.Errorf("retention history: row %d: %w", e.ID, err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// decodeHistory fills the ranges and losses from their stored forms, and blanks
// the one-partition fields of a row that covers several.
func decodeHistory(e *HistoryEntry, ranges, lost []byte) error {
	e.ExecutedAt = e.ExecutedAt.UTC()
	var err error
	if ranges == nil { // written before migration 110: one partition
		e.Ranges = []PartitionRange{{Partition: e.Partition, FromOffset: e.FromOffset, ToOffset: e.ToOffset,
			Messages: e.Messages}}
	} else if e.Ranges, err = decodeRanges(ranges); err != nil {
		return err
	}
	if e.Partitions > 1 {
		e.Partition, e.PartitionID, e.FromOffset, e.ToOffset = "", "", nil, nil
	}
	e.Lost, err = decodeLosses(lost, e.Partition)
	return err
}

// storedLoss is a loss as the query above answers it: a loss row, or an
// element of a pre-110 row's lost column (no partitions or ranges: the
// row's one partition).
type storedLoss struct {
	Group      string          `json:"group"`
	Messages   int64           `json:"messages"`
	Partitions int             `json:"partitions"`
	FromOffset *int64          `json:"fromOffset"`
	ToOffset   *int64          `json:"toOffset"`
	Leased     int64           `json:"leased"`
	Ranges     json.RawMessage `json:"ranges"`
}

func decodeLosses(raw []byte, rowPartition string) ([]GroupLoss, error) {
	out := []GroupLoss{}
	if len(raw) == 0 {
		return out, nil
	}
	var stored []storedLoss
	if err := json.Unmarshal(raw, &stored); err != nil {
		return nil, err
	}
	for _, l := range stored {
		g := GroupLoss{Group: l.Group, Messages: l.Messages, Partitions: max(l.Partitions, 1),
			FromOffset: l.FromOffset, ToOffset: l.ToOffset, Leased: l.Leased}
		if l.Ranges == nil {
			g.Ranges = []PartitionRange{{Partition: rowPartition, FromOffset: l.FromOffset, ToOffset: l.ToOffset,
				Messages: l.Messages}}
		} else {
			var err error
			if g.Ranges, err = decodeRanges(l.Ranges); err != nil {
				return nil, err
			}
		}
		if g.Partitions > 1 {
			g.FromOffset, g.ToOffset = nil, nil
		}
		out = append(out, g)
	}
	return out, nil
}

// decodeRanges reads {partition: [from, to, messages]}, in partition name
// order.
func decodeRanges(raw []byte) ([]PartitionRange, error) {
	var m map[string][3]*int64
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("ranges: %w", err)
	}
	out := make([]PartitionRange, 0, len(m))
	for name, r := range m {
		pr := PartitionRange{Partition: name, FromOffset: r[0], ToOffset: r[1]}
		if r[2] != nil {
			pr.Messages = *r[2]
		}
		out = append(out, pr)
	}
	slices.SortFunc(out, func(a, b PartitionRange) int { return strings.Compare(a.Partition, b.Partition) })
	return out, nil
}

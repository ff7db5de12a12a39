package streams

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Reclaim rules, as lethe.reclaim_history and the metrics name them.
const (
	RuleRetired   = "stream_query_retired"
	RuleIdleState = "stream_state_idle"
)

// Reclaimers are the streams rules of the retention loop's reclaim phase:
// the state of queries that were reset or removed, and keys idle past
// StateIdleDays. Each step deletes at most a batch of rows and writes its
// audit row in the same transaction.
func (s *Service) Reclaimers() []Reclaimer {
	return []Reclaimer{retiredReclaimer{}, idleReclaimer{days: s.cfg.StateIdleDays}}
}

// Reclaimer is the retention loop's view of a reclaim rule
// (retention.Reclaimer).
type Reclaimer interface {
	Rule() string
	Options() []string
	Due() string
	Bound() string
	Step(ctx context.Context, conn *pgx.Conn, now time.Time, batch int) (int64, bool, error)
}

// retiredReclaimer deletes the state of retired queries, oldest retirement
// first, and a retired query's row once it has no state left.
type retiredReclaimer struct{}

func (retiredReclaimer) Rule() string      { return RuleRetired }
func (retiredReclaimer) Options() []string { return nil }
func (retiredReclaimer) Due() string {
	return "lethe.stream_queries' index on retired_at: the oldest retired query first"
}
func (retiredReclaimer) Bound() string {
	return "a retired query's state from the next cycle on, a batch of keys per step"
}

func (retiredReclaimer) Step(ctx context.Context, conn *pgx.Conn, now time.Time, batch int) (int64, bool, error) {
	var deleted int64
	var found bool
	err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		var id uuid.UUID
		var name, why string
		err := tx.QueryRow(ctx, `SELECT id, name, retired_why FROM lethe.stream_queries
			WHERE retired_at IS NOT NULL ORDER BY retired_at, id LIMIT 1 FOR UPDATE SKIP LOCKED`).Scan(&id, &name, &why)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		found = true
		subject := fmt.Sprintf("%s (%s, query_id %s)", name, why, id)
		if deleted, err = deleteRetiredState(ctx, tx, id, subject, now, batch); err != nil || deleted == int64(batch) {
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM lethe.stream_queries WHERE id = $1`, id)
		return err
	})
	if err != nil {
		return deleted, false, fmt.Errorf("reclaim retired query state: %w", err)
	}
	return deleted, !found, nil
}

// deleteRetiredState deletes up to batch state rows of query id and writes
// the audit row.
func deleteRetiredState(ctx context.Context, tx pgx.Tx, id uuid.UUID, subject string, now time.Time, batch int) (int64, error) {
	var n int64
	err := tx.QueryRow(ctx, `
		WITH doomed AS (
			SELECT partition_id, key FROM lethe.stream_state WHERE query_id = $1 LIMIT $2
		), del AS (
			DELETE FROM lethe.stream_state s USING doomed d
			 WHERE s.query_id = $1 AND s.partition_id = d.partition_id AND s.key = d.key
			RETURNING s.updated_at
		), audit AS (
			INSERT INTO lethe.reclaim_history (executed_at, rule, subject, rows, oldest, newest)
			SELECT $3, $4, $5, count(*), min(updated_at), max(updated_at) FROM del
		)
		SELECT count(*) FROM del`, id, batch, now, RuleRetired, subject).Scan(&n)
	return n, err
}

// idleReclaimer deletes keys no cycle wrote for days, oldest first.
type idleReclaimer struct{ days int }

func (idleReclaimer) Rule() string      { return RuleIdleState }
func (idleReclaimer) Options() []string { return []string{"STREAMS_STATE_IDLE_DAYS"} }
func (idleReclaimer) Due() string {
	return "lethe.stream_state's index on updated_at: the keys no cycle wrote for longest first"
}
func (idleReclaimer) Bound() string {
	return "an idle key between D and D + I after its last write"
}

func (r idleReclaimer) Step(ctx context.Context, conn *pgx.Conn, now time.Time, batch int) (int64, bool, error) {
	cutoff := now.AddDate(0, 0, -r.days)
	var n int64
	err := conn.QueryRow(ctx, `
		WITH doomed AS (
			SELECT query_id, partition_id, key FROM lethe.stream_state
			 WHERE updated_at < $1 ORDER BY updated_at LIMIT $2 FOR UPDATE SKIP LOCKED
		), del AS (
			DELETE FROM lethe.stream_state s USING doomed d
			 WHERE s.query_id = d.query_id AND s.partition_id = d.partition_id AND s.key = d.key
			RETURNING s.query_id, s.updated_at
		), audit AS (
			INSERT INTO lethe.reclaim_history (executed_at, rule, subject, rows, oldest, newest)
			SELECT $3, $4, coalesce(q.name, '') || ' (query_id ' || del.query_id || ')', count(*),
			       min(del.updated_at), max(del.updated_at)
			  FROM del LEFT JOIN lethe.stream_queries q ON q.id = del.query_id
			 GROUP BY q.name, del.query_id
		)
		SELECT count(*) FROM del`, cutoff, batch, now, RuleIdleState).Scan(&n)
	if err != nil {
		return n, false, fmt.Errorf("reclaim idle stream state (not written since %s): %w", cutoff.Format(time.RFC3339), err)
	}
	return n, n < int64(batch), nil
}

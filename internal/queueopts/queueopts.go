// Package queueopts is a queue's configuration: parsing and checking the
// options a configure names, a new queue's defaults, writing a queue's
// options (lethe.queues), the retentionTier option's requests and their
// confirmation (lethe.request_tier, lethe.confirm_tier), and reading
// queues with their options. It is out of the engine, which is the log:
// the engine reads a queue's options to deliver by them, and this package
// tells it to drop what it cached when they change.
package queueopts

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/apierr"
	"github.com/lethe-mq/lethe/internal/clock"
	"github.com/lethe-mq/lethe/internal/seal"
	"github.com/lethe-mq/lethe/internal/tier"
	"github.com/lethe-mq/lethe/internal/validate"
)

// Engine is what the configuration needs of the log's engine: its pool,
// clock, logger and keys, the defaults of a new queue, and dropping what
// it cached of a queue whose options changed. *engine.Engine is one.
type Engine interface {
	Pool() *pgxpool.Pool
	Clock() clock.Clock
	Logger() *slog.Logger
	Keys() *seal.Keys
	// QueueDefaults are the server's retentionTier and quarantined for a
	// new queue.
	QueueDefaults() (retentionTier, quarantined string)
	// ForgetQueueOptions drops the queue's cached options.
	ForgetQueueOptions(queue string)
	// Forget drops everything cached of the queue.
	Forget(queue string)
}

// Service configures, confirms tier changes of, and reads queues.
type Service struct {
	eng   Engine
	pool  *pgxpool.Pool
	clock clock.Clock
	log   *slog.Logger
}

// New is the configuration of the queues of eng.
func New(eng Engine) *Service {
	return &Service{eng: eng, pool: eng.Pool(), clock: cmp.Or[clock.Clock](eng.Clock(), clock.Real{}),
		log: cmp.Or(eng.Logger(), slog.Default())}
}

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", apierr.Invalid, fmt.Sprintf(format, args...))
}

func notFoundf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", apierr.NotFound, fmt.Sprintf(format, args...))
}

// Parse decodes configure options over base, rejecting unknown keys,
// wrong types and out-of-range values, so a typo never passes silently.
func Parse(raw json.RawMessage, base api.QueueOptions) (api.QueueOptions, error) {
	opts := base
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return opts, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&opts); err != nil {
		return base, invalidf("options: %s", describeJSONError(err))
	}
	checks := []struct {
		name      string
		v, lo, hi int
	}{
		{"leaseTime", opts.LeaseTime, 1, 7 * 24 * 3600},
		{"retryLimit", opts.RetryLimit, 0, 1000},
		{"retryDelay", opts.RetryDelay, 0, 24 * 3600 * 1000},
		{"maxSize", opts.MaxSize, 0, 1 << 30},
		{"ttl", opts.TTL, 0, 1 << 30},
		{"priority", opts.Priority, -1000, 1000},
		{"delayedProcessing", opts.DelayedProcessing, 0, 365 * 24 * 3600},
		{"windowBuffer", opts.WindowBuffer, 0, 24 * 3600},
		{"retentionSeconds", opts.RetentionSeconds, 0, 1 << 30},
		{"completedRetentionSeconds", opts.CompletedRetentionSeconds, 0, 1 << 30},
		{"maxWaitTimeSeconds", opts.MaxWaitTimeSeconds, 0, 1 << 30},
		{"dedupWindowSeconds", opts.DedupWindowSeconds, 0, 1 << 30},
	}
	for _, c := range checks {
		if c.v < c.lo || c.v > c.hi {
			return base, invalidf("options.%s must be between %d and %d, got %d", c.name, c.lo, c.hi, c.v)
		}
	}
	for name, on := range map[string]bool{"deadLetterQueue": opts.DeadLetterQueue, "dlqAfterMaxRetries": opts.DLQAfterMaxRetries} {
		if !on {
			return base, invalidf("options.%s cannot be false: a message that failed more than retryLimit times always goes to the "+
				"dead letters (in Queen too, whatever this option says); leave it out or set it true", name)
		}
	}
	if err := normalizeTierOptions(&opts, raw); err != nil {
		return base, err
	}
	return opts, nil
}

// publishedOptions is what a queue's stored options say, with the options
// lethe cannot turn off shown as they hold (queues configured before they
// were enforced stored Queen's false).
func publishedOptions(o api.QueueOptions) api.QueueOptions {
	o.DeadLetterQueue, o.DLQAfterMaxRetries = true, true
	return o
}

func describeJSONError(err error) string {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		return fmt.Sprintf("%s must be a %s, got a JSON %s", typeErr.Field, typeErr.Type, typeErr.Value)
	}
	return err.Error()
}

// Configure creates the queue or updates its options; options it does not
// name keep their current values (defaults for a new queue). A new
// retentionTier goes through lethe.request_tier: a shorter tier on a queue
// holding data is not applied but left awaiting confirmation, and the
// answer says so (RetentionChange).
func (s *Service) Configure(ctx context.Context, req api.ConfigureRequest) (*api.ConfigureResponse, error) {
	return s.ConfigureGuarded(ctx, req, nil)
}

// ShortenGuard is asked, inside a configure's transaction, before a
// shorter retentionTier applies at once to an existing queue (it holds
// nothing the change would settle, so no confirmation is asked); an error
// undoes the whole configure.
type ShortenGuard func(queue, from, to string) error

// ConfigureGuarded is Configure with guard (nil: none) asked before a
// shorter retentionTier applies without confirmation.
func (s *Service) ConfigureGuarded(ctx context.Context, req api.ConfigureRequest, guard ShortenGuard) (*api.ConfigureResponse, error) {
	if err := validate.Name("queue", req.Queue); err != nil {
		return nil, err
	}
	base := s.Defaults()
	cur, err := s.Get(ctx, req.Queue)
	if err == nil {
		base = cur.Options
	} else if !errors.Is(err, apierr.NotFound) {
		return nil, err
	}
	opts, err := Parse(req.Options, base)
	if err != nil {
		return nil, err
	}
	if opts.EncryptionEnabled && !s.eng.Keys().On() {
		return nil, fmt.Errorf("%w: options.encryptionEnabled needs QUEEN_ENCRYPTION_KEY (64 hexadecimal characters) on the server, "+
			"and this one has none: pushes to the queue would be refused; set the same key on every replica first", apierr.Conflict)
	}
	var change *api.RetentionChange
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		qid, err := s.upsertQueue(ctx, tx, req, opts)
		if err != nil {
			return err
		}
		// Named explicitly (even as the current tier, which withdraws a
		// change awaiting confirmation), the tier goes through the rules.
		if cur == nil || !namesOption(req.Options, "retentionTier") {
			return nil
		}
		var outcome string
		outcome, change, err = requestTier(ctx, tx, qid, req.Queue, opts.RetentionTier, s.clock.Now())
		if err == nil && guard != nil && outcome == tierApplied &&
			tier.Tier(opts.RetentionTier).Shorter(tier.Tier(cur.Options.RetentionTier)) {
			err = guard(req.Queue, cur.Options.RetentionTier, opts.RetentionTier)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("configure %s: %w", req.Queue, err)
	}
	s.eng.ForgetQueueOptions(req.Queue)
	if change != nil && change.State == ChangeAwaitingConfirm {
		opts.RetentionTier = change.From
		s.log.Warn("retention tier not shortened: it waits for confirmation", "queue", req.Queue,
			"tier", change.From, "requested", change.To, "would_delete_messages", change.Delete.Messages,
			"would_move_messages", change.Move.Messages+change.Hold.Messages,
			"confirm", "lethe retention confirm "+req.Queue)
	}
	return &api.ConfigureResponse{Configured: true, Queue: req.Queue, Namespace: req.Namespace, Task: req.Task,
		Options: opts, RetentionChange: change}, nil
}

// upsertQueue writes the queue's row: every option but the tier of an
// existing queue, which lethe.request_tier sets.
func (s *Service) upsertQueue(ctx context.Context, tx pgx.Tx, req api.ConfigureRequest, opts api.QueueOptions) (int64, error) {
	stored := opts
	// Columns hold these; the jsonb keeps the rest of Queen's options.
	stored.RetentionTier, stored.Quarantined, stored.RequiredGroups = "", "", nil
	extra, _ := json.Marshal(stored)
	var qid int64
	err := tx.QueryRow(ctx, `
		INSERT INTO lethe.queues (name, namespace, task, lease_time, retry_limit, delayed_processing, window_buffer,
		       retention_enabled, retention_seconds, completed_retention_seconds, max_wait_time_seconds,
		       dedup_window_seconds, options, created_at, updated_at, retry_delay_ms,
		       retention_tier, quarantined, required_groups)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $14, $15, $16, $17, $18)
		ON CONFLICT (name) DO UPDATE SET
		       namespace = CASE WHEN EXCLUDED.namespace <> '' THEN EXCLUDED.namespace ELSE lethe.queues.namespace END,
		       task = CASE WHEN EXCLUDED.task <> '' THEN EXCLUDED.task ELSE lethe.queues.task END,
		       lease_time = EXCLUDED.lease_time, retry_limit = EXCLUDED.retry_limit,
		       delayed_processing = EXCLUDED.delayed_processing, window_buffer = EXCLUDED.window_buffer,
		       retention_enabled = EXCLUDED.retention_enabled, retention_seconds = EXCLUDED.retention_seconds,
		       completed_retention_seconds = EXCLUDED.completed_retention_seconds,
		       max_wait_time_seconds = EXCLUDED.max_wait_time_seconds,
		       dedup_window_seconds = EXCLUDED.dedup_window_seconds,
		       options = EXCLUDED.options, updated_at = EXCLUDED.updated_at,
		       retry_delay_ms = EXCLUDED.retry_delay_ms,
		       quarantined = EXCLUDED.quarantined, required_groups = EXCLUDED.required_groups
		RETURNING id`,
		req.Queue, req.Namespace, req.Task, opts.LeaseTime, opts.RetryLimit, opts.DelayedProcessing, opts.WindowBuffer,
		opts.RetentionEnabled, opts.RetentionSeconds, opts.CompletedRetentionSeconds, opts.MaxWaitTimeSeconds,
		opts.DedupWindowSeconds, extra, s.clock.Now(), opts.RetryDelay,
		opts.RetentionTier, opts.Quarantined, nonNil(opts.RequiredGroups)).Scan(&qid)
	return qid, err
}

const queueInfoQuery = `
	SELECT q.name, q.namespace, q.task, q.options, q.retention_tier, q.quarantined, q.required_groups,
	       q.created_at, q.updated_at,
	       (SELECT count(*) FROM lethe.partitions p WHERE p.queue_id = q.id),
	       (SELECT coalesce(sum(p.next_offset - p.low_watermark), 0) FROM lethe.partitions p WHERE p.queue_id = q.id)
	  FROM lethe.queues q`

func scanQueueInfo(row pgx.Row) (*api.Queue, error) {
	qi := &api.Queue{}
	var raw []byte
	var tierName, quarantined string
	var required []string
	if err := row.Scan(&qi.Name, &qi.Namespace, &qi.Task, &raw, &tierName, &quarantined, &required,
		&qi.CreatedAt, &qi.UpdatedAt, &qi.Partitions, &qi.Messages); err != nil {
		return nil, err
	}
	qi.Options = api.DefaultQueueOptions()
	if len(raw) > 2 {
		_ = json.Unmarshal(raw, &qi.Options)
	}
	qi.Options.RetentionTier, qi.Options.Quarantined, qi.Options.RequiredGroups = tierName, quarantined, required
	qi.Options = publishedOptions(qi.Options)
	return qi, nil
}

// Get returns one queue.
func (s *Service) Get(ctx context.Context, name string) (*api.Queue, error) {
	qi, err := scanQueueInfo(s.pool.QueryRow(ctx, queueInfoQuery+` WHERE q.name = $1`, name))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFoundf("queue %q does not exist", name)
	}
	if err != nil {
		return nil, fmt.Errorf("get queue %s: %w", name, err)
	}
	return qi, nil
}

// List returns every queue, optionally of one namespace or task.
func (s *Service) List(ctx context.Context, namespace, task string) ([]*api.Queue, error) {
	rows, err := s.pool.Query(ctx, queueInfoQuery+`
		WHERE ($1 = '' OR q.namespace = $1) AND ($2 = '' OR q.task = $2) ORDER BY q.name`, namespace, task)
	if err != nil {
		return nil, fmt.Errorf("list queues: %w", err)
	}
	defer rows.Close()
	var out []*api.Queue
	for rows.Next() {
		qi, err := scanQueueInfo(rows)
		if err != nil {
			return nil, fmt.Errorf("list queues: %w", err)
		}
		out = append(out, qi)
	}
	return out, rows.Err()
}

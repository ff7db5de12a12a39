package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// pipelinedTx is a consumer transaction that spends no round trip of its
// own: BEGIN (with synchronous_commit off) goes to the server in one
// pipeline with the transaction's first statement, and a statement the
// transaction defers (the cursor's final UPDATE) goes with the next one or
// with COMMIT. A pop then makes three round trips (lock, read, update and
// commit) instead of five, an ack two instead of four: the end-to-end
// profile spent more of PostgreSQL's CPU on round trips than on the
// statements' execution.
//
// A deferred statement's error surfaces when it is sent: at the next
// statement or at Commit, which then fails and rolls back, so the
// transaction's outcome is the same; only the error comes later. Not safe
// for concurrent use (no transaction is).
type pipelinedTx struct {
	conn    *pgx.Conn
	begun   bool // BEGIN was sent
	closed  bool
	pending []deferred
}

type deferred struct {
	label string // names the statement in its error
	sql   string
	args  []any
}

// beginQueries open a consumer transaction; they travel in the pipeline
// of its first statement. Its statements take generic plans: a pop's
// cursor lock reads the partition through an inlined function
// (store.LockFreeCursor), and PostgreSQL, which plans a statement with an
// array parameter anew on each call when the custom plan looks cheaper,
// parsed and planned that read on every claim (a fifth of pop+ack over
// 10,000 partitions lost to it). Every statement of these transactions
// looks rows up by key, so the generic plan is the custom one.
var beginQueries = []string{"BEGIN",
	"SELECT set_config('synchronous_commit', 'off', true), set_config('plan_cache_mode', 'force_generic_plan', true)"}

// deferExec queues a statement whose result nobody reads, to be sent with
// the transaction's next statement or its COMMIT. A transaction of
// another kind runs it at once.
func deferExec(ctx context.Context, tx pgx.Tx, label, sql string, args ...any) error {
	if p, ok := tx.(*pipelinedTx); ok && !p.closed {
		p.pending = append(p.pending, deferred{label, sql, args})
		return nil
	}
	if _, err := tx.Exec(ctx, sql, args...); err != nil {
		return fmt.Errorf("%s: %w", label, err)
	}
	return nil
}

// preamble starts a batch with what must precede the next statement: BEGIN
// when not yet sent, and the deferred statements. It answers how many
// results of that batch are the preamble's.
func (t *pipelinedTx) preamble() (*pgx.Batch, []string) {
	b := &pgx.Batch{}
	var labels []string
	if !t.begun {
		for _, q := range beginQueries {
			b.Queue(q)
			labels = append(labels, "begin a consumer transaction")
		}
	}
	for _, d := range t.pending {
		b.Queue(d.sql, d.args...)
		labels = append(labels, d.label)
	}
	return b, labels
}

// sent records that the preamble went out.
func (t *pipelinedTx) sent() {
	t.begun = true
	t.pending = nil
}

// readPreamble reads the preamble's results off br.
func readPreamble(br pgx.BatchResults, labels []string) error {
	for _, l := range labels {
		if _, err := br.Exec(); err != nil {
			return fmt.Errorf("%s: %w", l, err)
		}
	}
	return nil
}

// flush sends the preamble alone, when there is one.
func (t *pipelinedTx) flush(ctx context.Context) error {
	if t.closed {
		return pgx.ErrTxClosed
	}
	b, labels := t.preamble()
	if len(labels) == 0 {
		return nil
	}
	br := t.conn.SendBatch(ctx, b)
	t.sent()
	err := readPreamble(br, labels)
	return errors.Join(err, br.Close())
}

// pipeline sends the preamble and sql in one batch and reads the
// preamble's results, leaving sql's to the caller; nil (and no error)
// when there is no preamble, and the caller sends sql alone.
func (t *pipelinedTx) pipeline(ctx context.Context, sql string, args []any) (pgx.BatchResults, error) {
	b, labels := t.preamble()
	if len(labels) == 0 {
		return nil, nil
	}
	b.Queue(sql, args...)
	br := t.conn.SendBatch(ctx, b)
	t.sent()
	if err := readPreamble(br, labels); err != nil {
		return nil, errors.Join(err, br.Close())
	}
	return br, nil
}

func (t *pipelinedTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if t.closed {
		return pgconn.CommandTag{}, pgx.ErrTxClosed
	}
	br, err := t.pipeline(ctx, sql, args)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	if br == nil {
		return t.conn.Exec(ctx, sql, args...)
	}
	tag, err := br.Exec()
	return tag, errors.Join(err, br.Close())
}

func (t *pipelinedTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if t.closed {
		return errRow{pgx.ErrTxClosed}
	}
	br, err := t.pipeline(ctx, sql, args)
	if err != nil {
		return errRow{err}
	}
	if br == nil {
		return t.conn.QueryRow(ctx, sql, args...)
	}
	return batchRow{br: br, row: br.QueryRow()}
}

// Query sends the statement with the preamble, as QueryRow does; the
// rows end the pipeline when closed.
func (t *pipelinedTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if t.closed {
		return nil, pgx.ErrTxClosed
	}
	br, err := t.pipeline(ctx, sql, args)
	if err != nil {
		return nil, err
	}
	if br == nil {
		return t.conn.Query(ctx, sql, args...)
	}
	rows, err := br.Query()
	if err != nil {
		return nil, errors.Join(err, br.Close())
	}
	return &batchRows{Rows: rows, br: br}, nil
}

func (t *pipelinedTx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	if err := t.flush(ctx); err != nil {
		return errBatch{err: err}
	}
	return t.conn.SendBatch(ctx, b)
}

func (t *pipelinedTx) CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error) {
	if err := t.flush(ctx); err != nil {
		return 0, err
	}
	return t.conn.CopyFrom(ctx, table, columns, src)
}

func (t *pipelinedTx) Prepare(ctx context.Context, name, sql string) (*pgconn.StatementDescription, error) {
	return t.conn.Prepare(ctx, name, sql)
}

// Commit sends what is pending with COMMIT in one round trip. A
// transaction that sent nothing has nothing to commit.
func (t *pipelinedTx) Commit(ctx context.Context) error {
	if t.closed {
		return pgx.ErrTxClosed
	}
	t.closed = true
	b, labels := t.preamble()
	if !t.begun && len(t.pending) == 0 {
		return nil
	}
	b.Queue("COMMIT")
	br := t.conn.SendBatch(ctx, b)
	t.sent()
	err := readPreamble(br, labels)
	if err == nil {
		var tag pgconn.CommandTag
		tag, err = br.Exec()
		if err == nil && tag.String() == "ROLLBACK" {
			err = pgx.ErrTxCommitRollback
		}
	}
	if err = errors.Join(err, br.Close()); err != nil {
		if abortErr := t.abort(ctx); abortErr != nil {
			err = errors.Join(err, abortErr)
		}
		return err
	}
	return nil
}

// Rollback drops what is pending and rolls back what was sent.
func (t *pipelinedTx) Rollback(ctx context.Context) error {
	if t.closed {
		return pgx.ErrTxClosed
	}
	t.closed = true
	t.pending = nil
	if !t.begun {
		return nil
	}
	return t.abort(ctx)
}

// abort ends a transaction the server may hold open or failed; when even
// that fails the connection is closed, so the pool never hands out one
// inside a transaction.
func (t *pipelinedTx) abort(ctx context.Context) error {
	if t.conn.PgConn().TxStatus() == 'I' {
		return nil
	}
	if _, err := t.conn.Exec(context.WithoutCancel(ctx), "ROLLBACK"); err != nil {
		_ = t.conn.Close(context.WithoutCancel(ctx))
		return fmt.Errorf("roll back a consumer transaction: %w", err)
	}
	return nil
}

// Begin would be a savepoint; no consumer transaction nests one.
func (t *pipelinedTx) Begin(context.Context) (pgx.Tx, error) {
	return nil, errors.New("a consumer transaction does not nest")
}

// LargeObjects are not used by consumer transactions.
func (t *pipelinedTx) LargeObjects() pgx.LargeObjects { return pgx.LargeObjects{} }

func (t *pipelinedTx) Conn() *pgx.Conn { return t.conn }

// batchRow reads the one row of a statement sent in a pipeline, then the
// end of the pipeline.
type batchRow struct {
	br  pgx.BatchResults
	row pgx.Row
}

func (r batchRow) Scan(dest ...any) error {
	err := r.row.Scan(dest...)
	return errors.Join(err, r.br.Close())
}

// batchRows reads the rows of a statement sent in a pipeline; closing
// them reads the end of the pipeline, whose error Err then answers.
type batchRows struct {
	pgx.Rows
	br     pgx.BatchResults
	closed bool
	err    error
}

func (r *batchRows) Close() {
	if r.closed {
		return
	}
	r.closed = true
	r.Rows.Close()
	r.err = r.br.Close()
}

func (r *batchRows) Next() bool {
	if r.Rows.Next() {
		return true
	}
	r.Close()
	return false
}

func (r *batchRows) Err() error {
	return errors.Join(r.Rows.Err(), r.err)
}

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// errBatch answers a batch that could not be sent; the embedded interface
// (nil) only completes the method set.
type errBatch struct {
	pgx.BatchResults
	err error
}

func (b errBatch) Exec() (pgconn.CommandTag, error) { return pgconn.CommandTag{}, b.err }
func (b errBatch) Query() (pgx.Rows, error)         { return nil, b.err }
func (b errBatch) QueryRow() pgx.Row                { return errRow{b.err} }
func (b errBatch) Close() error                     { return b.err }

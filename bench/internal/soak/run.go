package soak

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lethe-mq/lethe/bench/internal/lethebench"
	"github.com/lethe-mq/lethe/bench/internal/meter"
	"github.com/lethe-mq/lethe/bench/internal/report"
)

// drainLimit bounds the wait, after the load, for the consumers to
// receive what is still in flight.
const drainLimit = 2 * time.Minute

// progressEvery is how often a progress line is printed.
const progressEvery = 10 * time.Second

// Env is what the soak runs against.
type Env struct {
	URL  string
	Pool *pgxpool.Pool // lethe's database, as a role that may read its statistics
	PID  int           // lethe's process, for its RSS; 0: not measured
	Out  io.Writer     // progress lines
	Meta report.Meta
}

// Run offers the load for spec.Duration, sampling every spec.Interval,
// then drains the consumers and judges the footprint.
func Run(ctx context.Context, env Env, spec Spec) (*Report, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	conns := len(spec.Queues) * (sendersPerQueue + spec.Groups*spec.Consumers)
	c := lethebench.NewClient(env.URL, conns)
	defer c.Close()
	l := newLoad(&spec, c)
	if err := l.configure(ctx); err != nil {
		return nil, err
	}
	consumeCtx, stopConsumers := context.WithCancel(ctx)
	waitConsumers := l.consume(consumeCtx)
	defer func() {
		stopConsumers()
		waitConsumers()
	}()
	fmt.Fprintf(env.Out, "soak: %s\n", spec.describe())

	r := &Report{Meta: env.Meta, Load: spec.describe()}
	run := &running{env: env, spec: &spec, load: l, smp: &sampler{pool: env.Pool, pid: env.PID}, began: time.Now()}
	if err := run.sample(ctx); err != nil {
		return nil, err
	}
	loaded := run.loop(ctx)
	if last := r.lastElapsed(run.samples); loaded.Seconds()-last > spec.Interval.Seconds()/2 {
		if err := run.sample(ctx); err != nil {
			fmt.Fprintln(env.Out, err)
		}
	}
	fmt.Fprintf(env.Out, "soak: load done after %s; draining (at most %s)\n", loaded.Round(time.Second), drainLimit)
	r.Undelivered = l.drain(ctx, drainLimit)
	stopConsumers()
	waitConsumers()

	r.Samples = run.samples
	for _, q := range l.queues {
		d := q.ledger.account(q.name, l.groups)
		run.recordedLosses(ctx, &d)
		r.Deliveries = append(r.Deliveries, d)
	}
	r.Errors = []ErrorTally{
		{"push", l.pushErr.Count(), l.pushErr.First()},
		{"pop", l.popErr.Count(), l.popErr.First()},
		{"ack", l.ackErr.Count(), l.ackErr.First()},
	}
	if ctx.Err() != nil {
		r.Meta.Notes = append(r.Meta.Notes, fmt.Sprintf("interrupted after %s of %s: judged on what ran", loaded.Round(time.Second), spec.Duration))
	}
	r.Verdict = Judge(loaded, r.Samples, r.Deliveries)
	return r, nil
}

func (r *Report) lastElapsed(samples []Sample) float64 {
	if len(samples) == 0 {
		return 0
	}
	return samples[len(samples)-1].Elapsed
}

// running is the soak while the load runs.
type running struct {
	env     Env
	spec    *Spec
	load    *load
	smp     *sampler
	began   time.Time
	samples []Sample
}

// loop runs the producers for the soak's duration, sampling and printing
// progress meanwhile; it answers how long the load ran.
func (r *running) loop(ctx context.Context) time.Duration {
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.load.produce(ctx, r.spec.Duration)
	}()
	tick := time.NewTicker(r.spec.Interval)
	defer tick.Stop()
	prog := time.NewTicker(min(progressEvery, r.spec.Interval))
	defer prog.Stop()
	for {
		select {
		case <-done:
			return time.Since(r.began)
		case <-tick.C:
			if err := r.sample(ctx); err != nil && ctx.Err() == nil {
				fmt.Fprintln(r.env.Out, err)
			}
		case <-prog.C:
			r.progress()
		}
	}
}

func (r *running) sample(ctx context.Context) error {
	s, err := r.smp.take(ctx, r.began)
	if err != nil {
		return err
	}
	s.Push, s.E2E = r.load.lat.cut()
	s.Pushed, s.Received = r.load.counts()
	r.samples = append(r.samples, s)
	return nil
}

func (r *running) progress() {
	pushed, received := r.load.counts()
	line := fmt.Sprintf("soak %s/%s  pushed %s  received %s  owed %s  errors push/pop/ack %d/%d/%d",
		time.Since(r.began).Round(time.Second), r.spec.Duration, meter.Group(pushed), meter.Group(received),
		meter.Group(r.load.missing()), r.load.pushErr.Count(), r.load.popErr.Count(), r.load.ackErr.Count())
	if n := len(r.samples); n > 0 {
		s := r.samples[n-1]
		line += fmt.Sprintf("  | at %.0f min: database %s MiB, WAL %s MiB, RSS %s MiB, push p99 %.1f ms, e2e p99 %.1f ms",
			s.Elapsed/60, mb(s.DatabaseBytes), mb(s.WALBytes), mb(s.RSSBytes), s.Push.P99, s.E2E.P99)
	}
	fmt.Fprintln(r.env.Out, line)
}

// recordedLosses reads what lethe's retention history says each group
// lost unread of the queue. The history's layout may change; a failure
// is reported in the tally (-1) rather than ending the soak.
func (r *running) recordedLosses(ctx context.Context, d *Delivery) {
	// Losses are rows of lethe.retention_losses, one per group and
	// decision; rows written before lethe's migration 110 carry theirs in
	// the history's lost column.
	rows, err := r.env.Pool.Query(ctx, `
		SELECT x.grp, sum(x.messages)::bigint FROM (
		    SELECT l->>'group' AS grp, (l->>'messages')::bigint AS messages
		      FROM lethe.retention_history h CROSS JOIN LATERAL jsonb_array_elements(h.lost) l
		     WHERE h.queue_name = $1 AND h.lost IS NOT NULL
		    UNION ALL
		    SELECT lo.group_name, lo.messages FROM lethe.retention_losses lo WHERE lo.queue_name = $1) x
		 GROUP BY 1`, d.Queue)
	if err != nil {
		fmt.Fprintf(r.env.Out, "soak: read the losses recorded for %s: %v\n", d.Queue, err)
		for i := range d.Groups {
			d.Groups[i].RecordedLost = -1
		}
		return
	}
	defer rows.Close()
	byGroup := map[string]int64{}
	for rows.Next() {
		var g string
		var n int64
		if err := rows.Scan(&g, &n); err == nil {
			byGroup[g] = n
		}
	}
	for i := range d.Groups {
		d.Groups[i].RecordedLost = byGroup[d.Groups[i].Group]
	}
}

// describe is the spec in words.
func (s *Spec) describe() string {
	out := fmt.Sprintf("%s, %s incompressible payloads in pushes of %d, %d consumer groups × %d long-polling consumers per queue, a sample every %s",
		s.Duration, sizeLabel(s.Size), s.Batch, s.Groups, s.Consumers, s.Interval)
	for _, q := range s.Queues {
		rule := "no rule"
		switch {
		case q.CompletedRetention > 0 && q.Retention > 0:
			rule = fmt.Sprintf("completedRetentionSeconds %d, retentionSeconds %d", int(q.CompletedRetention.Seconds()), int(q.Retention.Seconds()))
		case q.CompletedRetention > 0:
			rule = fmt.Sprintf("completedRetentionSeconds %d", int(q.CompletedRetention.Seconds()))
		case q.Retention > 0:
			rule = fmt.Sprintf("retentionSeconds %d", int(q.Retention.Seconds()))
		}
		out += fmt.Sprintf("; queue %s: %d msg/s over %d partitions, %s", s.queueName(q), q.Rate, q.Partitions, rule)
	}
	if s.TimeScale != 1 {
		out += fmt.Sprintf("; lethe's clock runs %.0f× faster than the wall clock (rules in its time)", s.TimeScale)
	}
	return out
}

func sizeLabel(n int) string {
	if n%1024 == 0 {
		return fmt.Sprintf("%d KiB", n/1024)
	}
	return fmt.Sprintf("%d B", n)
}

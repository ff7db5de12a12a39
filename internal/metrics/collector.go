package metrics

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/lethe-mq/lethe/internal/clock"
)

const (
	// scrapeTimeout bounds the queries of one scrape; Prometheus' own
	// default scrape timeout is 10 s.
	scrapeTimeout = 3 * time.Second
	// lagSeriesPerQueue bounds the (queue, group) lag series to this many
	// times the queue limit, the deepest lags first.
	lagSeriesPerQueue = 10
)

// queueStatsSQL reads the deepest queues with their partition count, depth
// and dead letters, plus the total number of queues.
const queueStatsSQL = `
WITH top AS (
    SELECT q.id, q.name, count(p.id) AS partitions,
           coalesce(sum(p.next_offset - p.low_watermark), 0)::bigint AS depth
      FROM lethe.queues q
      LEFT JOIN lethe.partitions p ON p.queue_id = q.id
     GROUP BY q.id
     ORDER BY depth DESC, q.name
     LIMIT $1)
SELECT t.id, t.name, t.partitions, t.depth,
       (SELECT count(*) FROM lethe.dead_letters d
          JOIN lethe.partitions p ON p.id = d.partition_id
         WHERE p.queue_id = t.id) AS dead,
       (SELECT count(*) FROM lethe.queues) AS total
  FROM top t`

// lagSQL sums, per consumer group, its lag over the partitions of the
// given queues. Lag is defined once, by the view lethe.group_lag (migration
// 100), which the API's consumer-group and status answers read too: a
// subscribed group without a cursor on a partition counts from its
// subscription start, and nothing below the low watermark counts.
const lagSQL = `
SELECT gl.queue_id, gl.group_name, sum(gl.offset_lag)::bigint AS lag
  FROM lethe.group_lag gl
 WHERE gl.queue_id = ANY($1)
 GROUP BY gl.queue_id, gl.group_name
 ORDER BY lag DESC, gl.group_name
 LIMIT $2`

// lossSQL reads, per consumer group of the given queues, when it first
// loses unread messages (the soonest loss_at of lethe.group_loss, migration
// 155, which the API reads too); groups that lose nothing are left out.
const lossSQL = `
SELECT gl.queue_id, gl.group_name, extract(epoch FROM min(gl.loss_at))::float8
  FROM lethe.group_loss gl
 WHERE gl.queue_id = ANY($1)
 GROUP BY gl.queue_id, gl.group_name
HAVING min(gl.loss_at) IS NOT NULL`

// lossRefresh is how long a replica serves the loss times it read. They
// move only when a group's oldest unread segment or a queue's rules change,
// and reading them costs about 50 µs a partition with unread data (0.5 s
// at 10,000), against 21 ms for the lag of the same partitions, so every
// scrape paid it.
const lossRefresh = time.Minute

// dbCollector reads queue gauges from PostgreSQL at scrape time.
type dbCollector struct {
	pool      *pgxpool.Pool
	log       *slog.Logger
	clock     clock.Clock
	maxQueues int
	loss      lossCache

	up, queues, partitions, depth, dead, lag, lossAt *prometheus.Desc
}

func newDBCollector(pool *pgxpool.Pool, log *slog.Logger, clk clock.Clock, maxQueues int) *dbCollector {
	return &dbCollector{
		pool:      pool,
		log:       log,
		clock:     clk,
		maxQueues: maxQueues,
		up: prometheus.NewDesc("lethe_metrics_database_up",
			"1 if the last scrape read the queue gauges from PostgreSQL, 0 if the queries failed.", nil, nil),
		queues: prometheus.NewDesc("lethe_queues",
			"Number of queues (all of them, even past the per-queue series limit).", nil, nil),
		partitions: prometheus.NewDesc("lethe_partitions",
			"Partitions of a queue.", []string{"queue"}, nil),
		depth: prometheus.NewDesc("lethe_queue_depth_messages",
			"Messages a queue holds: next offset minus low watermark, summed over partitions.", []string{"queue"}, nil),
		dead: prometheus.NewDesc("lethe_dead_letters",
			"Dead letters of a queue.", []string{"queue"}, nil),
		lag: prometheus.NewDesc("lethe_queue_lag_messages",
			"Messages a consumer group has yet to consume on a queue (lethe.group_lag: past its committed offset, or its subscription start on partitions it has not read yet), summed over the queue's partitions.",
			[]string{"queue", "group"}, nil),
		lossAt: prometheus.NewDesc("lethe_queue_group_loss_timestamp_seconds",
			"When a consumer group starts losing messages it has not read on a queue (Unix time): its oldest unread message's segment is then older than the shorter window of retentionSeconds and maxWaitTimeSeconds, and the next cycle deletes it. Absent when the group has nothing unread or no rule deletes unread data. Read at most once a minute per replica. Alert on it minus time().",
			[]string{"queue", "group"}, nil),
	}
}

func (c *dbCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.up, c.queues, c.partitions, c.depth, c.dead, c.lag, c.lossAt} {
		ch <- d
	}
}

func (c *dbCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	if err := c.collect(ctx, ch); err != nil {
		c.log.Warn("metrics: reading queue gauges failed", "error", err)
		ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, 1)
}

// collect emits nothing until both queries succeeded, so a scrape never
// shows half a picture.
func (c *dbCollector) collect(ctx context.Context, ch chan<- prometheus.Metric) error {
	var out []prometheus.Metric
	names := map[int64]string{}
	var ids []int64
	var total int64
	rows, err := c.pool.Query(ctx, queueStatsSQL, c.maxQueues)
	if err != nil {
		return fmt.Errorf("queue stats: %w", err)
	}
	for rows.Next() {
		var id, parts, depth, dead int64
		var name string
		if err := rows.Scan(&id, &name, &parts, &depth, &dead, &total); err != nil {
			rows.Close()
			return fmt.Errorf("queue stats: %w", err)
		}
		names[id] = name
		ids = append(ids, id)
		out = append(out,
			prometheus.MustNewConstMetric(c.partitions, prometheus.GaugeValue, float64(parts), name),
			prometheus.MustNewConstMetric(c.depth, prometheus.GaugeValue, float64(depth), name),
			prometheus.MustNewConstMetric(c.dead, prometheus.GaugeValue, float64(dead), name))
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("queue stats: %w", err)
	}
	out = append(out, prometheus.MustNewConstMetric(c.queues, prometheus.GaugeValue, float64(total)))
	if len(ids) > 0 {
		loss, err := c.loss.read(ctx, c.pool, c.clock.Now(), ids)
		if err != nil {
			return fmt.Errorf("consumer loss times: %w", err)
		}
		rows, err := c.pool.Query(ctx, lagSQL, ids, lagSeriesPerQueue*c.maxQueues)
		if err != nil {
			return fmt.Errorf("consumer lag: %w", err)
		}
		for rows.Next() {
			var id, lag int64
			var group string
			if err := rows.Scan(&id, &group, &lag); err != nil {
				rows.Close()
				return fmt.Errorf("consumer lag: %w", err)
			}
			out = append(out, prometheus.MustNewConstMetric(c.lag, prometheus.GaugeValue, float64(lag), names[id], group))
			if at, ok := loss[lossKey{id, group}]; ok {
				out = append(out, prometheus.MustNewConstMetric(c.lossAt, prometheus.GaugeValue, at, names[id], group))
			}
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("consumer lag: %w", err)
		}
	}
	for _, m := range out {
		ch <- m
	}
	return nil
}

// Command idleprobe measures where one push waits on an idle machine: one
// request in flight at a time, through a running lethe, then the same
// append straight to PostgreSQL (lethe.append_segment, autocommit), then a
// plain INSERT + commit of the same bytes. The differences are lethe's own
// cost (HTTP, engine, appender) and the append function's over one INSERT.
//
//	go run ./bench/idleprobe -url http://127.0.0.1:6632 -dsn postgres://...
//
// It writes to queue "idleprobe" and creates table idleprobe_rows: use a
// throwaway lethe (an embedded `lethe serve` with its own LETHE_DATA_DIR).
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/bench/internal/meter"
)

func main() {
	url := flag.String("url", "http://127.0.0.1:6632", "lethe's address")
	dsn := flag.String("dsn", "", "lethe's PostgreSQL")
	n := flag.Int("n", 2000, "requests of each kind (the first 100 warm up)")
	flag.Parse()
	if err := run(context.Background(), *url, *dsn, *n); err != nil {
		fmt.Fprintln(os.Stderr, "idleprobe:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, url, dsn string, n int) error {
	payload := `"` + strings.Repeat("x", 1000) + `"`
	lethe, err := measure(n, func(i int) error {
		body := fmt.Sprintf(`{"items":[{"queue":"idleprobe","partition":"p%d","payload":%s}]}`, i%8, payload)
		resp, err := http.Post(url+"/api/v1/push", "application/json", strings.NewReader(body))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			return err
		}
		if resp.StatusCode != http.StatusCreated {
			return fmt.Errorf("push answered %s", resp.Status)
		}
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Println("lethe push of one 1 KiB message, one in flight:", lethe)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	rows, _ := conn.Query(ctx, `SELECT p.id FROM lethe.partitions p JOIN lethe.queues q ON q.id = p.queue_id WHERE q.name = 'idleprobe'`)
	pids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil || len(pids) == 0 {
		return fmt.Errorf("the probe's partitions: %d, %w", len(pids), err)
	}
	frame := bytes.Repeat([]byte{1}, 1030)
	direct, err := measure(n, func(i int) error {
		now := time.Now()
		_, err := conn.Exec(ctx, `SELECT * FROM lethe.append_segment($1, '{}', '{}', $2, $3, $4, $4, $4)`,
			pids[i%len(pids)], []int32{int32(len(frame))}, frame, now)
		return err
	})
	if err != nil {
		return err
	}
	fmt.Println("lethe.append_segment straight, one in flight:    ", direct)
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS idleprobe_rows (id bigserial PRIMARY KEY, b bytea)`); err != nil {
		return err
	}
	insert, err := measure(n, func(int) error {
		_, err := conn.Exec(ctx, `INSERT INTO idleprobe_rows (b) VALUES ($1)`, frame)
		return err
	})
	if err != nil {
		return err
	}
	fmt.Println("INSERT + commit of the same bytes, one in flight:", insert)
	return nil
}

// measure runs call n times in a row and summarizes the latencies of all
// but the first 100.
func measure(n int, call func(i int) error) (string, error) {
	var lat meter.Recorder
	for i := range n {
		t := time.Now()
		if err := call(i); err != nil {
			return "", err
		}
		if i >= 100 {
			lat.Add(time.Since(t))
		}
	}
	s := lat.Summary()
	if s.Count == 0 {
		return "", fmt.Errorf("-n %d leaves nothing after the 100 warm-up calls", n)
	}
	return fmt.Sprintf("p50 %.2f ms, p99 %.2f ms, max %.2f ms (n=%d)", s.P50, s.P99, s.Max, s.Count), nil
}

package failover_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/client"
	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/clock"
	"github.com/lethe-mq/lethe/internal/config"
	"github.com/lethe-mq/lethe/internal/pgembed"
	"github.com/lethe-mq/lethe/internal/testserver"
)

// Every push lethe acknowledged before the primary died is on the promoted
// standby and is delivered; consumers and pushers carry on against the new
// primary through the same connection string; the retention loop's own
// connection follows it too. Replication is synchronous, as a deployment
// that must not lose acknowledged pushes runs it; consumer state commits
// asynchronously, so what a group acked just before the crash may be
// delivered again, never lost.
func TestFailoverLosesNoAcknowledgedPush(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	primary := startCluster(t, ctx, pgembed.Config{DataDir: dataDir(t), Logger: quiet, Throwaway: true,
		Replication: true, Settings: map[string]string{"synchronous_standby_names": "*"}})
	standby := startCluster(t, ctx, pgembed.Config{DataDir: dataDir(t), Logger: quiet, Throwaway: true,
		Replication: true, StandbyOf: primary})
	admin, err := pgx.Connect(ctx, primary.ConnString("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE lethe"); err != nil {
		t.Fatal(err)
	}
	var syncState string
	if err := admin.QueryRow(ctx, "SELECT sync_state FROM pg_stat_replication").Scan(&syncState); err != nil || syncState != "sync" {
		t.Fatalf("the standby replicates %q (%v), want sync", syncState, err)
	}
	admin.Close(ctx)
	dsn := fmt.Sprintf("host=%s,%s port=%d,%d user=postgres dbname=lethe sslmode=disable target_session_attrs=read-write "+
		"connect_timeout=5", primary.SocketDir(), standby.SocketDir(), primary.Port(), standby.Port())

	clk := clock.NewFake(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	srv := testserver.Start(t, testserver.Options{DatabaseURL: dsn, Clock: clk, Config: func(c *config.Server) {
		c.Retention.Enabled = true
		c.Retention.Interval = 100 * time.Millisecond
	}})
	c, err := client.New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Do(ctx, "POST", "/api/v1/configure", map[string]any{"queue": "evict",
		"options": map[string]any{"maxWaitTimeSeconds": 60}}, nil); err != nil {
		t.Fatal(err)
	}

	// Before: 200 acknowledged pushes on 4 partitions, half of them consumed.
	acked := map[int]bool{}
	for i := range 200 {
		push(t, ctx, c, "orders", i)
		acked[i] = true
	}
	consumed := consume(t, ctx, c, 100)

	// Four pushers run through the crash and the promotion, each until 10
	// of its pushes succeeded on the new primary. A push that fails may or
	// may not have been written; one that succeeded must be delivered.
	var mu sync.Mutex
	var failures []string
	promoted := make(chan struct{})
	pctx, pcancel := context.WithTimeout(ctx, 90*time.Second)
	defer pcancel()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			after := 0
			for n := 1000 + w; after < 10 && pctx.Err() == nil; n += 4 {
				_, err := c.Push(pctx, item("orders", n))
				mu.Lock()
				if err == nil {
					acked[n] = true
				} else if len(failures) < 1000 {
					failures = append(failures, err.Error())
				}
				mu.Unlock()
				select {
				case <-promoted:
					if err == nil {
						after++
					}
				default:
				}
				if err != nil {
					time.Sleep(100 * time.Millisecond)
				}
			}
		}()
	}
	time.Sleep(300 * time.Millisecond) // pushes in flight when the primary dies
	crashed := time.Now()
	if err := primary.Crash(ctx); err != nil {
		t.Fatal(err)
	}
	if err := standby.Promote(ctx); err != nil {
		t.Fatal(err)
	}
	close(promoted)
	wg.Wait()
	if pctx.Err() != nil {
		t.Fatalf("pushes did not recover: %d failures, the last: %v", len(failures), failures[len(failures)-1:])
	}
	t.Logf("pushers recovered %s after the crash; %d push attempts failed meanwhile (first: %v)",
		time.Since(crashed).Round(time.Millisecond), len(failures), failures[:min(1, len(failures))])
	for _, f := range failures {
		if strings.Contains(f, "connection refused") || strings.Contains(f, "EOF") {
			t.Errorf("a push failed without an answer from lethe: %s", f)
		}
	}

	// Every acknowledged message is delivered: what the group consumed
	// before, and what it consumes now (redeliveries of acks the crash
	// forgot are allowed, losses are not). A lease the crash left without
	// its ack runs out first.
	clk.Advance(10 * time.Minute)
	for n := range consume(t, ctx, c, -1) {
		consumed[n] = true
	}
	for i := range acked {
		if !consumed[i] {
			t.Errorf("message %d was acknowledged to its pusher and never delivered", i)
		}
	}

	// The retention loop follows too: a cycle on the new primary evicts
	// what the clock says is older than maxWaitTimeSeconds.
	push(t, ctx, c, "evict", 0)
	clk.Advance(2 * time.Minute)
	evictBy := time.Now().Add(30 * time.Second)
	for {
		var st api.QueueDetail
		if err := c.Do(ctx, "GET", "/api/v1/status/queues/evict", nil, &st); err != nil {
			t.Fatal(err)
		}
		if st.Totals.Total == 0 {
			break
		}
		if time.Now().After(evictBy) {
			t.Fatalf("the retention loop did not evict after the failover: queue evict still holds %d", st.Totals.Total)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// dataDir is a fresh folder the server's OS user can reach (t.TempDir's
// parent is closed to it when the tests run as root).
func dataDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "lethe-failover-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func startCluster(t *testing.T, ctx context.Context, cfg pgembed.Config) *pgembed.Cluster {
	t.Helper()
	cl, err := pgembed.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Stop(context.Background()) })
	return cl
}

func item(queue string, n int) api.PushItem {
	return api.PushItem{Queue: queue, Partition: fmt.Sprintf("p%d", n%4), Payload: json.RawMessage(fmt.Sprint(n))}
}

func push(t *testing.T, ctx context.Context, c *client.Client, queue string, n int) {
	t.Helper()
	if _, err := c.Push(ctx, item(queue, n)); err != nil {
		t.Fatalf("push %d to %s: %v", n, queue, err)
	}
}

// consume pops and acks n messages of orders (a multiple of 10) as group
// g, or all that are left when n < 0, and returns their numbers. Errors
// during the failover are retried for up to a minute.
func consume(t *testing.T, ctx context.Context, c *client.Client, n int) map[int]bool {
	t.Helper()
	got := map[int]bool{}
	deadline := time.Now().Add(time.Minute)
	for count := 0; n < 0 || count < n; {
		msgs, err := c.Pop(ctx, "orders", client.PopOptions{Group: "g", Batch: 10})
		if err == nil && len(msgs) == 0 {
			if n < 0 {
				return got
			}
			t.Fatalf("orders ran dry after %d of %d messages", count, n)
		}
		var acks []api.AckRequest
		if err == nil {
			for _, m := range msgs {
				var v int
				if err := json.Unmarshal(m.Data, &v); err != nil {
					t.Fatal(err)
				}
				got[v] = true
				count++
				acks = append(acks, client.AckRequestFor(m, api.AckCompleted, ""))
			}
			_, err = c.AckBatch(ctx, "g", acks)
		}
		if err != nil {
			if time.Now().After(deadline) {
				t.Fatalf("consuming still fails after a minute: %v", err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	return got
}

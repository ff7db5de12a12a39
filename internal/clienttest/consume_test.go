package clienttest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/client"
	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/clock"
	"github.com/lethe-mq/lethe/internal/testserver"
)

// consumeSetup starts a replica and a client with a few messages pushed to
// queue, one per partition named.
func consumeSetup(t *testing.T, opts testserver.Options, queue string, partitions ...string) (*testserver.Server, *client.Client) {
	t.Helper()
	srv := testserver.Start(t, opts)
	c, err := client.New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range partitions {
		payload := json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))
		if _, err := c.Push(context.Background(), api.PushItem{Queue: queue, Partition: p, Payload: payload}); err != nil {
			t.Fatal(err)
		}
	}
	return srv, c
}

// failOnError makes OnError fail the test: these tests expect no transient
// errors.
func failOnError(t *testing.T) func(error) {
	return func(err error) { t.Errorf("OnError: %v", err) }
}

func configure(t *testing.T, c *client.Client, queue, options string) {
	t.Helper()
	if _, err := c.Configure(context.Background(), api.ConfigureRequest{Queue: queue, Options: json.RawMessage(options)}); err != nil {
		t.Fatal(err)
	}
}

func TestConsumeRunsWorkersConcurrently(t *testing.T) {
	t.Parallel()
	const workers = 4
	_, c := consumeSetup(t, testserver.Options{}, "wide", "p0", "p1", "p2", "p3")
	var inFlight atomic.Int32
	allIn := make(chan struct{})
	var once sync.Once
	var handled atomic.Int32
	err := c.Consume(context.Background(), "wide", client.ConsumeOptions{Concurrency: workers, Limit: workers, OnError: failOnError(t)},
		func(ctx context.Context, m api.Message) error {
			handled.Add(1)
			if inFlight.Add(1) == workers {
				once.Do(func() { close(allIn) })
			}
			select {
			case <-allIn:
				return nil
			case <-time.After(10 * time.Second):
				return fmt.Errorf("only %d handlers ran at once, want %d", inFlight.Load(), workers)
			}
		})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-allIn:
	default:
		t.Fatalf("handlers never ran %d at once", workers)
	}
	if handled.Load() != workers {
		t.Fatalf("handler ran %d times, want %d", handled.Load(), workers)
	}
	left, err := c.Pop(context.Background(), "wide", client.PopOptions{Batch: 10, Partitions: 10})
	if err != nil || len(left) != 0 {
		t.Fatalf("after consuming: %d messages left (%v), want all acked", len(left), err)
	}
}

// leaseUntil reads the one live lease's expiry from the database.
func leaseUntil(t *testing.T, srv *testserver.Server) time.Time {
	t.Helper()
	var until time.Time
	err := srv.Pool.QueryRow(context.Background(),
		`SELECT lease_until FROM lethe.cursors WHERE lease_id IS NOT NULL`).Scan(&until)
	if err != nil {
		t.Fatalf("read lease: %v", err)
	}
	return until
}

// waitLeaseAtLeast waits for the consumer's renewal to push the lease to at
// least want.
func waitLeaseAtLeast(t *testing.T, srv *testserver.Server, want time.Time) {
	t.Helper()
	want = want.Truncate(time.Microsecond) // PostgreSQL's precision
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if !leaseUntil(t, srv).Before(want) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("lease still ends %v, want renewed to at least %v", leaseUntil(t, srv), want)
}

func TestConsumeRenewsLeaseWhileHandlerRuns(t *testing.T) {
	t.Parallel()
	fake := clock.NewFake(time.Now())
	srv, c := consumeSetup(t, testserver.Options{Clock: fake}, "slow")
	configure(t, c, "slow", `{"leaseTime":30}`)
	if _, err := c.Push(context.Background(), api.PushItem{Queue: "slow", Payload: json.RawMessage(`"big job"`)}); err != nil {
		t.Fatal(err)
	}
	started, release := make(chan struct{}), make(chan struct{})
	var releaseOnce sync.Once
	done := make(chan error, 1)
	var calls atomic.Int32
	ctx, cancel := context.WithCancel(context.Background())
	// On failure too, stop the consumer before the server goes away.
	t.Cleanup(func() {
		cancel()
		releaseOnce.Do(func() { close(release) })
		if err := <-done; err != nil {
			t.Errorf("Consume: %v", err)
		}
	})
	go func() {
		done <- c.Consume(ctx, "slow", client.ConsumeOptions{
			LeaseRenewInterval: 10 * time.Millisecond, Limit: 1, OnError: failOnError(t),
		}, func(ctx context.Context, m api.Message) error {
			calls.Add(1)
			close(started)
			<-release
			return nil
		})
	}()
	<-started
	first := leaseUntil(t, srv)
	if want := fake.Now().Add(30 * time.Second).Truncate(time.Microsecond); !first.Equal(want) {
		t.Fatalf("lease ends %v, want the queue's 30s from now (%v)", first, want)
	}
	// Move past the first lease's end; renewals must keep it ahead of now.
	for range 2 {
		fake.Advance(25 * time.Second)
		waitLeaseAtLeast(t, srv, fake.Now().Add(30*time.Second))
	}
	if !fake.Now().After(first) {
		t.Fatal("test bug: the clock did not pass the first lease's end")
	}
	// Another consumer must not get the message: its lease is still held.
	other, _ := client.New(srv.URL)
	if msgs, err := other.Pop(context.Background(), "slow", client.PopOptions{}); err != nil || len(msgs) != 0 {
		t.Fatalf("a second consumer popped %d messages (%v) while the lease was being renewed", len(msgs), err)
	}
	releaseOnce.Do(func() { close(release) })
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	done <- nil // for the cleanup
	if msgs, err := other.Pop(context.Background(), "slow", client.PopOptions{}); err != nil || len(msgs) != 0 {
		t.Fatalf("after the ack, %d messages left (%v), want none", len(msgs), err)
	}
	if calls.Load() != 1 {
		t.Fatalf("handler ran %d times, want once", calls.Load())
	}
}

func TestConsumeFailedHandlerRedelivers(t *testing.T) {
	t.Parallel()
	_, c := consumeSetup(t, testserver.Options{}, "flaky", "Default")
	var retries []int
	err := c.Consume(context.Background(), "flaky", client.ConsumeOptions{Limit: 2, OnError: failOnError(t)},
		func(ctx context.Context, m api.Message) error {
			retries = append(retries, m.RetryCount)
			if len(retries) == 1 {
				return errors.New("database busy")
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if len(retries) != 2 || retries[0] != 0 || retries[1] != 1 {
		t.Fatalf("deliveries' retry counts %v, want [0 1]: one failure, one redelivery", retries)
	}
	if left, _ := c.Pop(context.Background(), "flaky", client.PopOptions{}); len(left) != 0 {
		t.Fatalf("%d messages left after the successful redelivery", len(left))
	}
}

func TestConsumeSendsHandlerErrorText(t *testing.T) {
	t.Parallel()
	srv, c := consumeSetup(t, testserver.Options{}, "doomed")
	configure(t, c, "doomed", `{"retryLimit":0}`)
	if _, err := c.Push(context.Background(), api.PushItem{Queue: "doomed", Payload: json.RawMessage(`1`)}); err != nil {
		t.Fatal(err)
	}
	err := c.Consume(context.Background(), "doomed", client.ConsumeOptions{Limit: 1, OnError: failOnError(t)},
		func(ctx context.Context, m api.Message) error { panic("malformed order") })
	if err != nil {
		t.Fatal(err)
	}
	var reason string
	if err := srv.Pool.QueryRow(context.Background(), `SELECT error FROM lethe.dead_letters`).Scan(&reason); err != nil {
		t.Fatalf("no dead letter after a failure with retryLimit 0: %v", err)
	}
	if reason != "handler panicked: malformed order" {
		t.Fatalf("dead letter reason %q, want the handler's panic", reason)
	}
}

func TestConsumeStopsAtLimitWithinABatch(t *testing.T) {
	t.Parallel()
	parts := make([]string, 10)
	for i := range parts {
		parts[i] = "Default"
	}
	_, c := consumeSetup(t, testserver.Options{}, "many", parts...)
	var seen []string
	err := c.Consume(context.Background(), "many", client.ConsumeOptions{Batch: 4, Limit: 6, OnError: failOnError(t)},
		func(ctx context.Context, m api.Message) error {
			seen = append(seen, string(m.Data))
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 6 || seen[0] != `{"n":0}` || seen[5] != `{"n":5}` {
		t.Fatalf("handled %v, want n 0..5 in order", seen)
	}
	left, _ := c.Pop(context.Background(), "many", client.PopOptions{Batch: 100})
	if len(left) != 4 || string(left[0].Data) != `{"n":6}` {
		t.Fatalf("%d left, want the 4 past the limit starting at n 6", len(left))
	}
}

func TestConsumeReturnsNilWhenContextEnds(t *testing.T) {
	t.Parallel()
	_, c := consumeSetup(t, testserver.Options{}, "quiet")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	began := time.Now()
	err := c.Consume(ctx, "quiet", client.ConsumeOptions{Concurrency: 2, OnError: failOnError(t)},
		func(ctx context.Context, m api.Message) error { return nil })
	if err != nil || time.Since(began) > 5*time.Second {
		t.Fatalf("Consume = %v after %v, want nil soon after the context ended", err, time.Since(began))
	}
}

func TestConsumeStopsWhenIdle(t *testing.T) {
	t.Parallel()
	_, c := consumeSetup(t, testserver.Options{}, "idle", "Default")
	var handled int
	began := time.Now()
	err := c.Consume(context.Background(), "idle", client.ConsumeOptions{IdleTimeout: 300 * time.Millisecond, OnError: failOnError(t)},
		func(ctx context.Context, m api.Message) error { handled++; return nil })
	if err != nil || handled != 1 || time.Since(began) > 5*time.Second {
		t.Fatalf("Consume = %v, handled %d after %v; want nil, 1, soon after 300ms idle", err, handled, time.Since(began))
	}
}

func TestConsumeRefusedPopIsFatal(t *testing.T) {
	t.Parallel()
	_, c := consumeSetup(t, testserver.Options{}, "ok")
	err := c.Consume(context.Background(), "bad\x01name", client.ConsumeOptions{},
		func(ctx context.Context, m api.Message) error { return nil })
	var apiErr *client.APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 {
		t.Fatalf("Consume of an invalid queue name = %v, want the 400", err)
	}
}

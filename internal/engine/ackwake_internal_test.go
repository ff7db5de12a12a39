package engine

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/api"
	"github.com/lethe-mq/lethe/internal/clock"
)

// A push that lands while an ack of its partition is open wakes a long poll
// that finds the partition still leased, and the ack, which looked for more
// work before the push, saw none. The ack wakes a long poll itself at
// commit (notifier.pushMarks), so the message does not wait for the next
// push or the re-poll. Not parallel: TestCoreCloseWaitsForEveryGoroutine
// counts goroutines.
func TestAckWakesForAPushDuringIt(t *testing.T) {
	ctx := context.Background()
	cfg := Config{Clock: clock.NewFake(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	cfg.TestSignals.Init()
	e := New(migratedPool(t), cfg)
	defer e.Close()
	push := func(payload string) {
		t.Helper()
		if _, err := e.Push(ctx, []api.PushItem{{Queue: "race", Partition: "p", Payload: json.RawMessage(payload)}}, ""); err != nil {
			t.Fatal(err)
		}
	}
	push(`"a"`)
	held, err := e.Pop(ctx, PopRequest{Queue: "race", Group: "g"})
	if err != nil || len(held.Messages) != 1 {
		t.Fatalf("pop = %+v, %v", held, err)
	}
	type result struct {
		resp *api.PopResponse
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := e.Pop(ctx, PopRequest{Queue: "race", Group: "g", Wait: true, Timeout: time.Minute})
		done <- result{resp, err}
	}()
	e.cfg.TestSignals.Waiting.WaitFor(t, func(q string) bool { return q == "race" })

	m := held.Messages[0]
	pid := uuid.MustParse(m.PartitionID)
	items := []ackItem{{0, api.AckRequest{TransactionID: m.TransactionID, PartitionID: m.PartitionID, LeaseID: m.LeaseID,
		Status: api.AckCompleted, ConsumerGroup: "g"}}}
	results := make([]api.AckResult, 1)
	var fx effects
	err = e.consumerTx(ctx, func(tx pgx.Tx) error {
		if err := e.ackGroup(ctx, tx, pid, "g", items, results, &fx); err != nil {
			return err
		}
		// The ack holds the cursor; the push's wake-up finds nothing to
		// claim, and the long poll waits again.
		push(`"b"`)
		e.cfg.TestSignals.Waiting.WaitFor(t, func(q string) bool { return q == "race" })
		return nil
	})
	if err != nil || !results[0].Success {
		t.Fatalf("ack = %+v, %v", results[0], err)
	}
	var wakes atomic.Int64
	e.notifier.woken = func(q string) {
		if q == "race" {
			wakes.Add(1)
		}
	}
	e.fire(&fx)
	if wakes.Load() == 0 {
		t.Fatal("the ack woke no long poll: the push that landed during it stays unclaimed until the next wake-up or the re-poll")
	}
	r := <-done
	if r.err != nil || len(r.resp.Messages) != 1 || string(r.resp.Messages[0].Data) != `"b"` {
		t.Fatalf("long poll = %+v, %v; want message b", r.resp, r.err)
	}
}

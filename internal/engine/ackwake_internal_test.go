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

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/clock"
)

// A push that lands while an ack of its partition is open wakes a long poll
// that finds the partition still leased, and the ack, which looked for more
// work before the push, saw none. The ack wakes a long poll itself at
// commit (notifier.pushMarks), so the message does not wait for the next
// push or the re-poll: for a push and for a transaction's push alike. Not
// parallel: TestCoreCloseWaitsForEveryGoroutine counts goroutines.
func TestAckWakesForAPushDuringIt(t *testing.T) {
	ctx := context.Background()
	cfg := Config{Clock: clock.NewFake(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	cfg.TestSignals.Init()
	e := New(migratedPool(t), cfg)
	defer e.Close()
	var wakes atomic.Int64
	woken := e.notifier.woken
	e.notifier.woken = func(q string) {
		if q == "race" {
			wakes.Add(1)
		}
		woken(q)
	}
	item := func(payload string) []api.PushItem {
		return []api.PushItem{{Queue: "race", Partition: "p", Payload: json.RawMessage(payload)}}
	}
	routes := []struct {
		name string
		push func(payload string) error
	}{
		{"a push", func(payload string) error {
			_, err := e.Push(ctx, item(payload), "")
			return err
		}},
		{"a transaction's push", func(payload string) error {
			_, err := e.Transaction(ctx, api.TransactionRequest{Operations: []api.Operation{{Type: "push", Items: item(payload)}}}, "")
			return err
		}},
	}
	for _, route := range routes {
		if err := route.push(`"held"`); err != nil {
			t.Fatal(err)
		}
		held, err := e.Pop(ctx, PopRequest{Queue: "race", Group: "g"})
		if err != nil || len(held.Messages) != 1 {
			t.Fatalf("%s: pop = %+v, %v", route.name, held, err)
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
		items := []ackItem{{0, api.AckRequest{TransactionID: m.TransactionID, PartitionID: m.PartitionID, LeaseID: m.LeaseID,
			Status: api.AckCompleted, ConsumerGroup: "g"}}}
		results := make([]api.AckResult, 1)
		var fx effects
		err = e.consumerTx(ctx, func(tx pgx.Tx) error {
			if err := e.ackGroup(ctx, tx, uuid.MustParse(m.PartitionID), "g", items, results, &fx); err != nil {
				return err
			}
			// The ack holds the cursor; the push's wake-up finds nothing
			// to claim, and the long poll waits again.
			if err := route.push(`"during"`); err != nil {
				return err
			}
			e.cfg.TestSignals.Waiting.WaitFor(t, func(q string) bool { return q == "race" })
			return nil
		})
		if err != nil || !results[0].Success {
			t.Fatalf("%s: ack = %+v, %v", route.name, results[0], err)
		}
		before := wakes.Load()
		e.fire(&fx)
		if wakes.Load() == before {
			t.Fatalf("%s during an ack: the ack woke no long poll, so the message waits for the next wake-up or the re-poll", route.name)
		}
		r := <-done
		if r.err != nil || len(r.resp.Messages) != 1 || string(r.resp.Messages[0].Data) != `"during"` {
			t.Fatalf("%s: long poll = %+v, %v; want the message pushed during the ack", route.name, r.resp, r.err)
		}
		if _, err := e.Ack(ctx, []api.AckRequest{{TransactionID: r.resp.Messages[0].TransactionID, PartitionID: m.PartitionID,
			LeaseID: r.resp.Messages[0].LeaseID, Status: api.AckCompleted, ConsumerGroup: "g"}}, ""); err != nil {
			t.Fatal(err)
		}
	}
}

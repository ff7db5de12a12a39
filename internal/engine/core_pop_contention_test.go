package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/engine"
)

// Consumers that pop, ack and pop again on a backlog are never answered
// empty while a partition of the queue has unleased work for their group
// (when they were, 73% of pops came back empty with 8 consumers on 8
// partitions and 55,000 messages queued). Each consumer holds at most one
// lease, so with no more consumers than partitions, every pop starts and
// runs while at least one partition with work is free, as long as every
// partition has more work left than the other consumers can take
// meanwhile; only pops past that point (racing with the last messages) may
// come back empty. A long poll with 8 on 8 has a timeout shorter than the
// 1 s re-poll, so one that waits finds nothing at its deadline only if no
// partition was free;
// with 16 on 4, twelve long polls wait while four consumers work, and one
// answered empty after 5 s went without any of the leases released
// meanwhile (each wakes one waiter). Every message is delivered once, in
// order within its partition.
func TestCorePopNotEmptyWhileWorkIsUnleased(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		consumers, partitions int
		wait                  bool
		strict                bool // empty pops are counted as failures
	}{
		{8, 8, false, true},
		{8, 8, true, true},
		// Twelve long polls wait while four consumers work: each released
		// lease wakes one of them.
		{16, 4, true, true},
		// More consumers than partitions without waiting: empty pops are
		// right whenever all four partitions are leased; counted, and the
		// deliveries checked.
		{16, 4, false, false},
	} {
		name := fmt.Sprintf("%d consumers on %d partitions wait=%v", tc.consumers, tc.partitions, tc.wait)
		t.Run(name, func(t *testing.T) {
			runPopContention(t, tc.consumers, tc.partitions, tc.wait, tc.strict)
		})
	}
}

// contention is the shared record of one run: what each partition has
// delivered, in order.
type contention struct {
	mu        sync.Mutex
	perPart   map[string][]int // payload sequence numbers in delivery order
	delivered int
	empties   int // empty pops while every partition had work to spare
	late      int // empty pops near the end
}

func runPopContention(t *testing.T, consumers, partitions int, wait, strict bool) {
	const batch = 5
	// The strict window: 100 messages per partition, 400 for long polls,
	// so that a drain outlasts their timeout several times.
	perPartition := consumers*batch + 100
	if wait {
		perPartition += 300
	}
	e := newCoreEnv(t, engine.Config{})
	for p := range partitions {
		payloads := make([]string, perPartition)
		for i := range payloads {
			payloads[i] = fmt.Sprintf(`{"p":"p%d","i":%d}`, p, i)
		}
		e.push("busy", fmt.Sprintf("p%d", p), payloads...)
	}
	total := partitions * perPartition
	rec := &contention{perPart: map[string][]int{}}
	ctx, cancel := context.WithTimeout(e.ctx, 2*time.Minute)
	defer cancel()
	timeout := 900 * time.Millisecond
	if consumers > partitions {
		timeout = 5 * time.Second
	}
	req := engine.PopRequest{Queue: "busy", Group: "g", Batch: batch, Wait: wait, Timeout: timeout}
	var wg sync.WaitGroup
	errs := make(chan error, consumers)
	for range consumers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := consumeUntilDrained(ctx, e.eng, req, rec, total, consumers*batch, perPartition); err != nil {
				errs <- err
				cancel()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Logf("%d messages delivered; %d empty pops while every partition had work to spare, %d near the end",
		rec.delivered, rec.empties, rec.late)
	if rec.delivered != total {
		t.Fatalf("delivered %d of %d messages", rec.delivered, total)
	}
	for part, seq := range rec.perPart {
		for i, n := range seq {
			if n != i {
				t.Fatalf("partition %s delivered %v..., want 0, 1, 2, ... once each", part, seq[:i+1])
			}
		}
	}
	if strict && rec.empties > 0 {
		t.Errorf("%d pops came back empty while every partition had unleased work", rec.empties)
	}
}

// consumeUntilDrained pops, records and acks until every message was
// delivered. spare is how many messages the other consumers can hold.
func consumeUntilDrained(ctx context.Context, eng *engine.Engine, req engine.PopRequest, rec *contention, total, spare, perPartition int) error {
	for ctx.Err() == nil {
		resp, err := eng.Pop(ctx, req)
		if err != nil {
			return err
		}
		if len(resp.Messages) == 0 {
			if rec.emptyPop(total, spare, perPartition) {
				return nil
			}
			continue
		}
		if err := rec.record(resp.Messages); err != nil {
			return err
		}
		acks := make([]api.AckRequest, len(resp.Messages))
		for i, m := range resp.Messages {
			acks[i] = api.AckRequest{TransactionID: m.TransactionID, PartitionID: m.PartitionID, LeaseID: m.LeaseID,
				Status: api.AckCompleted, ConsumerGroup: "g"}
		}
		res, err := eng.Ack(ctx, acks, "")
		if err != nil {
			return err
		}
		for _, r := range res {
			if !r.Success {
				return fmt.Errorf("ack %s: %s", r.TransactionID, r.Error)
			}
		}
	}
	return nil
}

// record notes delivered messages in order of delivery.
func (c *contention) record(msgs []api.Message) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range msgs {
		var body struct {
			P string `json:"p"`
			I int    `json:"i"`
		}
		if err := json.Unmarshal(m.Data, &body); err != nil {
			return fmt.Errorf("payload %s: %w", m.Data, err)
		}
		c.perPart[body.P] = append(c.perPart[body.P], body.I)
		c.delivered++
	}
	return nil
}

// emptyPop counts an empty pop and answers whether everything was
// delivered. The pop was wrong when, at its end, every partition still had
// more undelivered messages than the other consumers could be holding or
// taking (spare): work was unleased for its whole duration.
func (c *contention) emptyPop(total, spare, perPartition int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	seen := len(c.perPart)
	if c.delivered == total {
		return true
	}
	roomy := true
	for _, seq := range c.perPart {
		roomy = roomy && perPartition-len(seq) > spare
	}
	if roomy && seen > 0 {
		c.empties++
	} else {
		c.late++
	}
	return false
}

package engine_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/engine"
)

// Consumers of one group racing over a few partitions: every message is
// delivered exactly once (no lease is ever handed to two consumers) and in
// partition order.
func TestCoreConcurrentConsumersShareWithoutOverlap(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	const parts, perPart = 4, 60
	for p := range parts {
		payloads := make([]string, perPart)
		for i := range payloads {
			payloads[i] = fmt.Sprint(i)
		}
		e.push("race", fmt.Sprint("p", p), payloads...)
	}
	var mu sync.Mutex
	delivered := map[string]int{}
	lastOffset := map[string]int64{}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			empty := 0
			for empty < 3 {
				resp, err := e.eng.Pop(e.ctx, engine.PopRequest{Queue: "race", Group: "workers", Batch: 7})
				if err != nil {
					errs <- err
					return
				}
				if len(resp.Messages) == 0 {
					empty++
					continue
				}
				empty = 0
				mu.Lock()
				for _, m := range resp.Messages {
					delivered[m.ID]++
					if last, ok := lastOffset[m.Partition]; ok && m.Offset != last+1 {
						errs <- fmt.Errorf("partition %s: offset %d delivered after %d", m.Partition, m.Offset, last)
					}
					lastOffset[m.Partition] = m.Offset
				}
				mu.Unlock()
				acks := make([]api.AckRequest, len(resp.Messages))
				for i, m := range resp.Messages {
					acks[i] = api.AckRequest{TransactionID: m.TransactionID, PartitionID: m.PartitionID, LeaseID: m.LeaseID, Status: "completed"}
				}
				res, err := e.eng.Ack(e.ctx, acks, "workers")
				if err != nil {
					errs <- err
					return
				}
				for _, r := range res {
					if !r.Success {
						errs <- fmt.Errorf("ack %s: %s", r.TransactionID, r.Error)
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if len(delivered) != parts*perPart {
		t.Errorf("delivered %d distinct messages, want %d", len(delivered), parts*perPart)
	}
	for id, n := range delivered {
		if n != 1 {
			t.Errorf("message %s delivered %d times", id, n)
		}
	}
}

package faults_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/client/api"
)

// procRetryPause is how long a producer or consumer waits after a failed
// request before trying again (lethe may be restarting).
const procRetryPause = 50 * time.Millisecond

// procLoad is concurrent producers and consumers on one queue, recording
// everything in a ledger, until stopped.
type procLoad struct {
	api        *procAPI
	ledger     *procLedger
	queue      string
	group      string
	partitions []string
	batchSizes []int // producers cycle through these

	stopProducers chan struct{}
	stopConsumers chan struct{}
	aborted       chan struct{} // closed by abort: give up at once
	stopOnce      sync.Once
	abortOnce     sync.Once
	producers     sync.WaitGroup
	consumers     sync.WaitGroup

	mu       sync.Mutex
	problems []string // 4xx answers and malformed 201s: never expected here
}

// start runs the given numbers of producers and consumers until stop, or
// abort (which the test's cleanup calls, so a failed test leaves no
// goroutine retrying against a dead process).
func (ld *procLoad) start(t *testing.T, producers, consumers int) {
	ld.stopProducers, ld.stopConsumers, ld.aborted = make(chan struct{}), make(chan struct{}), make(chan struct{})
	t.Cleanup(ld.abort)
	for i := range producers {
		ld.producers.Add(1)
		go func() { defer ld.producers.Done(); ld.produce(i) }()
	}
	for range consumers {
		ld.consumers.Add(1)
		go func() { defer ld.consumers.Done(); ld.consume(ld.stopConsumers) }()
	}
}

// stop lets each producer finish the batch it is pushing (retrying until
// acknowledged or its deadline passes), then stops the consumers.
func (ld *procLoad) stop() {
	ld.stopOnce.Do(func() {
		close(ld.stopProducers)
		ld.producers.Wait()
		close(ld.stopConsumers)
		ld.consumers.Wait()
	})
}

// abort makes producers give up the batch they are retrying, then stops.
func (ld *procLoad) abort() {
	if ld.aborted == nil {
		return // never started
	}
	ld.abortOnce.Do(func() { close(ld.aborted) })
	ld.stop()
}

// produce pushes batches of the producer's sequence until stopped. Each
// batch is retried with the same transaction ids until lethe answers 201,
// as a client that must not lose a message does; only then is it recorded
// as acknowledged.
func (ld *procLoad) produce(id int) {
	rng := rand.New(rand.NewPCG(uint64(id), 7))
	seq := 0
	for round := 0; ; round++ {
		select {
		case <-ld.stopProducers:
			return
		default:
		}
		n := ld.batchSizes[(round+id)%len(ld.batchSizes)]
		batch := make([]procPayload, n)
		for i := range batch {
			batch[i] = procNewPayload(id, seq+i, ld.partitions[rng.IntN(len(ld.partitions))])
		}
		seq += n
		ld.ledger.attempt(batch)
		if !ld.pushUntilAcked(batch) {
			return
		}
	}
}

// procPushGiveUp bounds how long one batch is retried.
const procPushGiveUp = time.Minute

func (ld *procLoad) pushUntilAcked(batch []procPayload) bool {
	items := make([]api.PushItem, len(batch))
	for i, p := range batch {
		payload, _ := json.Marshal(p)
		items[i] = api.PushItem{Queue: ld.queue, Partition: p.Partition, Payload: payload, TransactionID: p.txnID()}
	}
	deadline := time.Now().Add(procPushGiveUp)
	for time.Now().Before(deadline) && !ld.isAborted() {
		results, rep := ld.api.push(items)
		switch {
		case rep.err == nil && rep.status == http.StatusCreated:
			if err := procCheckPushResults(batch, results); err != nil {
				ld.problem("push: %v", err)
				return false
			}
			ld.ledger.acknowledge(batch)
			return true
		case rep.err == nil && rep.status < 500:
			ld.problem("push answered %d: %.200s", rep.status, rep.body)
			return false
		}
		time.Sleep(procRetryPause)
	}
	ld.problem("push of %d items (first %s) not acknowledged within %v", len(batch), batch[0].txnID(), procPushGiveUp)
	return false
}

func (ld *procLoad) isAborted() bool {
	select {
	case <-ld.aborted:
		return true
	default:
		return false
	}
}

// procCheckPushResults checks a 201: one result per item, in order, each
// stored now or before (a retry of a push whose answer was lost).
func procCheckPushResults(batch []procPayload, results []api.PushResult) error {
	if len(results) != len(batch) {
		return fmt.Errorf("%d results for %d items", len(results), len(batch))
	}
	for i, r := range results {
		if r.TransactionID != batch[i].txnID() || (r.Status != api.StatusQueued && r.Status != api.StatusDuplicate) {
			return fmt.Errorf("item %d (%s): result %+v", i, batch[i].txnID(), r)
		}
	}
	return nil
}

// consume pops and acks until stop is closed.
func (ld *procLoad) consume(stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		if _, ok := ld.consumeOnce(500); !ok {
			time.Sleep(procRetryPause)
		}
	}
}

// consumeOnce pops one batch, records it and acks it. got is the number of
// messages delivered; ok is false when a request failed.
func (ld *procLoad) consumeOnce(waitMs int) (got int, ok bool) {
	resp, rep := ld.api.pop(ld.queue, "", ld.group, 100, waitMs)
	switch {
	case rep.err != nil || rep.status >= 500:
		return 0, false
	case rep.status == http.StatusNoContent:
		return 0, true
	case rep.status != http.StatusOK:
		ld.problem("pop answered %d: %.200s", rep.status, rep.body)
		return 0, false
	}
	ld.ledger.deliver(resp.Messages)
	results, rep := ld.api.ackAll(ld.group, resp.Messages)
	switch {
	case rep.err != nil || rep.status >= 500:
		return len(resp.Messages), false
	case rep.status != http.StatusOK || len(results) != len(resp.Messages):
		ld.problem("ack of %d answered %d: %.200s", len(resp.Messages), rep.status, rep.body)
		return len(resp.Messages), false
	}
	ld.ledger.confirm(results, time.Now())
	return len(resp.Messages), true
}

// drain consumes until lease time plus a margin has passed (so leases
// taken by requests whose answers were lost have expired and their messages
// came back) and a pop finds nothing, and then either every acknowledged
// push has been delivered or nothing has come for procDrainQuiet. It
// returns false if that does not happen within timeout.
func (ld *procLoad) drain(leaseTime, timeout time.Duration) bool {
	began := time.Now()
	lastGot := began
	for time.Since(began) < timeout {
		got, ok := ld.consumeOnce(200)
		if got > 0 || !ok {
			lastGot = time.Now()
		}
		if ok && got == 0 && time.Since(began) > leaseTime+time.Second &&
			(len(ld.ledger.lost()) == 0 || time.Since(lastGot) > procDrainQuiet) {
			return true
		}
		if !ok {
			time.Sleep(procRetryPause)
		}
	}
	return false
}

// procDrainQuiet is how long a drain waits for more messages when some
// acknowledged ones are still missing; they are then reported lost.
const procDrainQuiet = 3 * time.Second

func (ld *procLoad) problem(format string, args ...any) {
	ld.mu.Lock()
	defer ld.mu.Unlock()
	if len(ld.problems) < 20 {
		ld.problems = append(ld.problems, fmt.Sprintf(format, args...))
	}
}

func (ld *procLoad) problemList() []string {
	ld.mu.Lock()
	defer ld.mu.Unlock()
	return append([]string(nil), ld.problems...)
}

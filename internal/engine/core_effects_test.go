package engine_test

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/engine"
)

// hookCounts records every hook call as "hook queue [group status]" -> n.
type hookCounts struct {
	mu sync.Mutex
	n  map[string]int
}

func (h *hookCounts) add(key string, n int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.n[key] += n
}

func (h *hookCounts) get(key string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n[key]
}

func recordHooks() (*hookCounts, engine.Hooks) {
	h := &hookCounts{n: map[string]int{}}
	return h, engine.Hooks{
		Pushed:          func(q string, n int) { h.add("pushed "+q, n) },
		Delivered:       func(q, g string, n int) { h.add("delivered "+q+" "+g, n) },
		Acked:           func(q, g, st string, n int) { h.add("acked "+q+" "+g+" "+st, n) },
		Unreadable:      func(q string, n int) { h.add("unreadable "+q, n) },
		PartitionFailed: func(q, op string) { h.add("failed "+q+" "+op, 1) },
	}
}

// Counters move only for work that committed: transactional pushes count
// as pushed, the acks and pushes of a rolled-back transaction count for
// nothing.
func TestCoreHooksCountCommittedWorkOnly(t *testing.T) {
	t.Parallel()
	h, hooks := recordHooks()
	e := newCoreEnv(t, engine.Config{Hooks: hooks})
	e.push("in", "", `1`, `2`)
	resp := e.popN(engine.PopRequest{Queue: "in", Group: "g", Batch: 2}, 2)
	m := resp.Messages
	ok, err := e.eng.Transaction(e.ctx, api.TransactionRequest{Operations: []api.Operation{
		{Type: "ack", TransactionID: m[0].TransactionID, PartitionID: m[0].PartitionID, Status: "completed", ConsumerGroup: "g"},
		{Type: "push", Items: []api.PushItem{{Queue: "out", Payload: json.RawMessage(`1`)}, {Queue: "out", Payload: json.RawMessage(`2`)}}},
	}}, "")
	if err != nil || !ok.Success {
		t.Fatalf("transaction = %+v, %v", ok, err)
	}
	bad, err := e.eng.Transaction(e.ctx, api.TransactionRequest{Operations: []api.Operation{
		{Type: "ack", TransactionID: m[1].TransactionID, PartitionID: m[1].PartitionID, Status: "completed", ConsumerGroup: "g"},
		{Type: "push", Items: []api.PushItem{{Queue: "out", Payload: json.RawMessage(`3`)}}},
		{Type: "ack", TransactionID: "unknown", PartitionID: m[1].PartitionID, Status: "completed", ConsumerGroup: "g"},
	}}, "")
	if err != nil || bad.Success {
		t.Fatalf("failing transaction = %+v, %v; want success false", bad, err)
	}
	for key, want := range map[string]int{
		"pushed in": 2, "delivered in g": 2,
		"pushed out":           2, // the transaction's pushes; not the rolled-back one
		"acked in g completed": 1, // not the rolled-back ack
	} {
		if got := h.get(key); got != want {
			t.Errorf("%s = %d, want %d", key, got, want)
		}
	}
	e.ackMsg(m[1], api.AckCompleted)
	e.ackMsg(m[1], api.AckCompleted) // already done: answered, not counted again
	if got := h.get("acked in g completed"); got != 2 {
		t.Errorf("acked after a repeated ack = %d, want 2", got)
	}
}

// A transactional push wakes a waiting consumer like any other.
func TestCoreTransactionalPushWakesLongPoll(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	done := make(chan *api.PopResponse, 1)
	go func() {
		resp, err := e.eng.Pop(e.ctx, engine.PopRequest{Queue: "tx-lp", Wait: true, Timeout: 10 * time.Second})
		if err != nil {
			t.Error(err)
		}
		done <- resp
	}()
	e.sig.Waiting.WaitFor(t, func(q string) bool { return q == "tx-lp" })
	if _, err := e.eng.Transaction(e.ctx, api.TransactionRequest{Operations: []api.Operation{
		{Type: "push", Items: []api.PushItem{{Queue: "tx-lp", Payload: json.RawMessage(`"hello"`)}}},
	}}, ""); err != nil {
		t.Fatal(err)
	}
	e.sig.Woken.WaitFor(t, func(q string) bool { return q == "tx-lp" })
	if resp := <-done; resp == nil || len(resp.Messages) != 1 {
		t.Errorf("long poll after a transactional push = %+v", resp)
	}
}

// Group commit reports every flush; together they hold every frame pushed.
func TestCorePushFlushSignals(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	const pushers = 8
	var wg sync.WaitGroup
	for p := range pushers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.push("flush", fmt.Sprint("p", p%3), `1`, `2`)
		}()
	}
	wg.Wait()
	frames := 0
	for frames < 2*pushers {
		f := e.sig.Flushed.WaitOrTimeout(t)
		if f.Partitions < 1 || f.Frames < 2 {
			t.Errorf("flush %+v: want at least one partition and one request", f)
		}
		frames += f.Frames
	}
	if frames != 2*pushers {
		t.Errorf("flushes wrote %d frames, want %d", frames, 2*pushers)
	}
}

// Close waits for every goroutine the engine started, group-commit
// flushers included, and refuses pushes afterwards. Not
// parallel: it looks at every goroutine of the process.
func TestCoreCloseWaitsForEveryGoroutine(t *testing.T) {
	e := newCoreEnv(t, engine.Config{})
	var wg sync.WaitGroup
	for p := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = e.eng.Push(e.ctx, []api.PushItem{{Queue: "close", Partition: fmt.Sprint(p), Payload: json.RawMessage(`1`)}}, "")
		}()
	}
	wg.Wait()
	e.eng.Close()
	// A goroutine that has returned (its WaitGroup done) may still be on
	// its way out, in runtime.goexit: poll briefly until it is gone; one
	// that outlived Close stays.
	var left []string
	for deadline := time.Now().Add(2 * time.Second); ; {
		left = engineGoroutines()
		if len(left) == 0 || time.Now().After(deadline) {
			break
		}
		runtime.Gosched()
	}
	for _, g := range left {
		t.Errorf("a goroutine of the engine outlived Close:\n%s", g)
	}
	if _, err := e.eng.Push(e.ctx, []api.PushItem{{Queue: "close", Payload: json.RawMessage(`1`)}}, ""); err == nil {
		t.Error("a push after Close succeeded")
	}
}

// engineGoroutines lists the stacks of the engine's goroutines (not the
// tests').
func engineGoroutines() []string {
	buf := make([]byte, 1<<20)
	var out []string
	for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		if strings.Contains(g, "lethe/internal/engine.") && !strings.Contains(g, "engine_test.") {
			out = append(out, g)
		}
	}
	return out
}

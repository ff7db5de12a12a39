package engine_test

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/engine"
	"github.com/lethe-mq/lethe/internal/inspect"
	"github.com/lethe-mq/lethe/internal/queueopts"
)

// expiredCounter counts the Expired hook by queue/group.
type expiredCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *expiredCounter) hooks() engine.Hooks {
	c.n = map[string]int{}
	return engine.Hooks{Expired: func(queue, group string, n int) {
		c.mu.Lock()
		c.n[queue+"/"+group] += n
		c.mu.Unlock()
	}}
}

func (c *expiredCounter) get(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[key]
}

// ttl: a message older than the queue's ttl is never delivered, to any
// group, in any mode, before any sweep removed it; it is counted, and the
// browse shows it as expired.
func TestCoreTTLExpiredMessagesAreNeverDelivered(t *testing.T) {
	t.Parallel()
	var expired expiredCounter
	e := newCoreEnv(t, engine.Config{Hooks: expired.hooks()})
	e.configure("ttl", `{"ttl": 60, "retryDelay": 0}`)
	e.push("ttl", "", `"old-1"`, `"old-2"`)
	e.clock.Advance(30 * time.Second)
	e.push("ttl", "", `"young"`)
	e.clock.Advance(31 * time.Second) // the first two are 61 s old, the last 31 s
	for _, req := range []engine.PopRequest{
		{Queue: "ttl", Batch: 10},
		{Queue: "ttl", Group: "g", Batch: 10, AutoAck: true},
		{Queue: "ttl", Group: "part", Partition: api.DefaultPartition, Batch: 10},
	} {
		resp := e.pop(req)
		if got := strings.Join(corePayloads(resp), ","); got != `"young"` {
			t.Errorf("%+v got %s, want only the message younger than the ttl", req, got)
		}
	}
	if n := expired.get("ttl/g"); n != 2 {
		t.Errorf("expired counted %d for group g, want 2", n)
	}
	page, err := readerOf(e.eng).BrowseMessages(e.ctx, inspect.MessageFilter{Queue: "ttl", Status: api.MessageExpired})
	if err != nil || len(page.Messages) != 0 {
		t.Errorf("browse expired after every group passed them: %+v, %v (they are completed now)", page, err)
	}
	// A failed message that outlives the ttl before its redelivery is not
	// delivered again.
	e.push("ttl", "r", `"retried"`)
	first := e.popN(engine.PopRequest{Queue: "ttl", Group: "g2", Partition: "r"}, 1)
	e.ackMsg(first.Messages[0], api.AckFailed)
	e.clock.Advance(61 * time.Second)
	if resp := e.pop(engine.PopRequest{Queue: "ttl", Group: "g2", Partition: "r"}); len(resp.Messages) != 0 {
		t.Errorf("redelivery past the ttl got %v", corePayloads(resp))
	}
	e.push("ttl", "s", `"waiting"`)
	e.clock.Advance(61 * time.Second)
	page, err = readerOf(e.eng).BrowseMessages(e.ctx, inspect.MessageFilter{Queue: "ttl", Partition: "s"})
	if err != nil || len(page.Messages) != 1 || page.Messages[0].Status != api.MessageExpired {
		t.Errorf("browse of a message past the ttl nobody read: %+v, %v; want status expired", page, err)
	}
}

// maxSize: as in Queen, a push that would take the messages waiting in
// queue mode past maxSize is refused, whole; nothing is written.
func TestCoreMaxSizeRefusesAPushThatWouldOverflow(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	e.configure("small", `{"maxSize": 3}`)
	e.push("small", "a", `1`)
	e.push("small", "b", `2`)
	before := e.rowCounts()
	items := []api.PushItem{{Queue: "small", Partition: "a", Payload: json.RawMessage(`3`)}, {Queue: "other", Payload: json.RawMessage(`4`)},
		{Queue: "small", Partition: "c", Payload: json.RawMessage(`5`)}}
	_, err := e.eng.Push(e.ctx, items, "")
	if !errors.Is(err, engine.ErrConflict) || !strings.Contains(err.Error(), "maxSize 3") {
		t.Fatalf("push past maxSize: %v, want a conflict naming maxSize", err)
	}
	_, err = e.eng.Transaction(e.ctx, api.TransactionRequest{Operations: []api.Operation{
		{Type: "push", Items: items[:1]}, {Type: "push", Items: items[2:]}}}, "")
	if !errors.Is(err, engine.ErrConflict) {
		t.Errorf("transaction past maxSize: %v, want a conflict", err)
	}
	coreSameCounts(t, before, e.rowCounts())
	// Consumed in queue mode, a message no longer counts.
	resp := e.popN(engine.PopRequest{Queue: "small", Partition: "a"}, 1)
	e.ackMsg(resp.Messages[0], api.AckCompleted)
	e.pushItems(items[0], items[2])
	// Pushes a replica accepted in maintenance mode are replayed whatever
	// the size.
	if _, err := e.eng.PushBuffered(e.ctx, items[:1]); err != nil {
		t.Errorf("replaying a buffered push into a full queue: %v", err)
	}
}

// priority: a pop by namespace tries the queues with the higher priority
// first.
func TestCorePriorityOrdersANamespacePop(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	for _, q := range []struct{ name, opts string }{{"a-low", `{}`}, {"b-high", `{"priority": 5}`}, {"c-mid", `{"priority": 1}`}} {
		if _, err := queueopts.New(e.eng).Configure(e.ctx, api.ConfigureRequest{Queue: q.name, Namespace: "ns", Options: json.RawMessage(q.opts)}); err != nil {
			t.Fatal(err)
		}
		e.push(q.name, "", `"`+q.name+`"`)
	}
	var order []string
	for range 3 {
		resp := e.popN(engine.PopRequest{Namespace: "ns", AutoAck: true}, 1)
		order = append(order, resp.Queue)
	}
	if got := strings.Join(order, ","); got != "b-high,c-mid,a-low" {
		t.Errorf("namespace pops took %s, want b-high,c-mid,a-low", got)
	}
}

// deadLetterQueue and dlqAfterMaxRetries cannot be turned off (a message
// past retryLimit always goes to the dead letters, in Queen too), and are
// shown as true; ttl defaults to none.
func TestCoreDeadLetterSwitchesAndDefaults(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	e.configure("q", `{"deadLetterQueue": true, "dlqAfterMaxRetries": true}`)
	for _, opts := range []string{`{"deadLetterQueue": false}`, `{"dlqAfterMaxRetries": false}`} {
		_, err := queueopts.New(e.eng).Configure(e.ctx, api.ConfigureRequest{Queue: "q", Options: json.RawMessage(opts)})
		if !errors.Is(err, engine.ErrInvalid) || !strings.Contains(err.Error(), "dead letters") {
			t.Errorf("configure %s: %v, want a refusal saying why", opts, err)
		}
	}
	// A queue stored with Queen's false (configured before) shows the truth.
	if _, err := e.pool.Exec(e.ctx, `UPDATE lethe.queues SET options = options || '{"deadLetterQueue": false, "dlqAfterMaxRetries": false}'`); err != nil {
		t.Fatal(err)
	}
	q, err := queueopts.New(e.eng).Get(e.ctx, "q")
	if err != nil || !q.Options.DeadLetterQueue || !q.Options.DLQAfterMaxRetries || q.Options.TTL != 0 {
		t.Errorf("published options %+v, %v; want both dead-letter switches true and ttl 0", q.Options, err)
	}
}

package engine_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/engine"
	"github.com/lethe-mq/lethe/internal/inspect"
)

// sized is a JSON string payload of exactly n bytes that starts with its
// index, so that order can be checked.
func sized(i, n int) string {
	head := fmt.Sprintf(`"%03d`, i)
	return head + strings.Repeat("x", n-len(head)-1) + `"`
}

// drainInOrder pops with req and acks until nothing is left, and answers
// how many messages each pop gave and the payloads' indexes in the order
// delivered.
func drainInOrder(t *testing.T, e *coreEnv, req engine.PopRequest) (sizes []int, order []string) {
	t.Helper()
	for range 20 {
		resp := e.pop(req)
		if len(resp.Messages) == 0 {
			return sizes, order
		}
		sizes = append(sizes, len(resp.Messages))
		for _, m := range resp.Messages {
			order = append(order, string(m.Data[1:4]))
			e.ackMsg(m, "completed")
		}
	}
	t.Fatalf("still popping after 20 pops: %v", sizes)
	return nil, nil
}

// A pop stops adding messages once their payloads reach PopMaxBytes, the
// first always coming, so a batch of large messages is answered (and read,
// and held) a bounded part at a time; the rest comes with the next pops,
// in order and once. Fails when the bound is not applied on either read
// (the one the cursor's lock makes, or a later one), or when a message
// larger than the bound is never served.
func TestCorePopStopsAtItsByteBound(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{PopMaxBytes: 1000})
	want := make([]string, 10)
	for i := range 10 {
		e.push("bytes", "apart", sized(i, 300)) // a segment each
		want[i] = fmt.Sprintf("%03d", i)
	}
	together := make([]string, 10)
	for i := range together {
		together[i] = sized(i, 300)
	}
	e.push("bytes", "together", together...) // one segment

	for _, partition := range []string{"apart", "together"} {
		// 300-byte payloads against a bound of 1000: the fourth starts at
		// 900 bytes, under the bound; the fifth would start at 1200.
		sizes, order := drainInOrder(t, e, engine.PopRequest{Queue: "bytes", Partition: partition, Group: "g", Batch: 10})
		if !slices.Equal(sizes, []int{4, 4, 2}) {
			t.Errorf("partition %s: pops gave %v messages, want [4 4 2]", partition, sizes)
		}
		if !slices.Equal(order, want) {
			t.Errorf("partition %s: delivered %v, want %v once each in order", partition, order, want)
		}
	}

	// A message larger than the bound still comes, alone.
	e.push("bytes", "large", sized(0, 5000), sized(1, 10), sized(2, 10))
	sizes, order := drainInOrder(t, e, engine.PopRequest{Queue: "bytes", Partition: "large", Group: "g", Batch: 10})
	if !slices.Equal(sizes, []int{1, 2}) || !slices.Equal(order, []string{"000", "001", "002"}) {
		t.Errorf("a message over the bound: pops gave %v (%v), want [1 2] in order", sizes, order)
	}
}

// The bound is the whole pop's: a pop of several partitions stops claiming
// once the messages it holds reach it. Fails when each partition gets the
// whole bound.
func TestCorePopByteBoundSpansPartitions(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{PopMaxBytes: 1000})
	for _, p := range []string{"a", "b", "c"} {
		e.push("spread", p, sized(0, 300), sized(1, 300))
	}
	resp := e.pop(engine.PopRequest{Queue: "spread", Group: "g", Batch: 10, MaxPartitions: 3})
	// Two from the first partition (600 bytes), then the second's two
	// (the first starts at 600, the second at 900): 1200, and no third.
	if len(resp.Messages) != 4 || resp.PartitionsClaimed != 2 {
		t.Errorf("pop of 3 partitions under a 1000-byte bound: %d messages from %d partitions, want 4 from 2",
			len(resp.Messages), resp.PartitionsClaimed)
	}
	var bytes int
	for _, m := range resp.Messages {
		bytes += len(m.Data)
	}
	if bytes != 1200 {
		t.Errorf("payload bytes answered = %d, want 1200", bytes)
	}
	// And a request's own bound, smaller than the engine's, holds too.
	e.push("own", "p", sized(0, 300), sized(1, 300), sized(2, 300))
	if resp := e.pop(engine.PopRequest{Queue: "own", Group: "g", Batch: 10, MaxBytes: 300}); len(resp.Messages) != 1 {
		t.Errorf("pop with MaxBytes 300 gave %d messages of 300 bytes, want 1", len(resp.Messages))
	}
}

// A page of dead letters is bounded in payload bytes like a pop: it stops
// before the dead letter whose payloads before it reach the bound, the
// first always coming, and says Truncated; the next page goes on from
// there. Fails when the bound is not applied, or when a page cut by it is
// not marked.
func TestDeadLetterPageStopsAtItsByteBound(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	for i := range 5 {
		e.push("dead", "p", sized(i, 300))
	}
	resp := e.popN(engine.PopRequest{Queue: "dead", Group: "g", Batch: 5}, 5)
	for _, m := range resp.Messages {
		e.ackMsg(m, api.AckDLQ)
	}
	r := readerOf(e.eng)
	page := func(offset int, maxBytes int64) *api.DeadLetterList {
		t.Helper()
		p, err := r.DeadLetters(e.ctx, inspect.DeadLetterFilter{Queue: "dead", Page: inspect.Page{Limit: 10, Offset: offset}, MaxBytes: maxBytes})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	if p := page(0, 0); len(p.Messages) != 5 || p.Truncated || p.Total != 5 {
		t.Fatalf("page without a small bound: %d of %d, truncated %v; want 5 of 5, not truncated", len(p.Messages), p.Total, p.Truncated)
	}
	first := page(0, 1000)
	if len(first.Messages) != 4 || !first.Truncated || first.Total != 5 {
		t.Errorf("page under a 1000-byte bound: %d of %d, truncated %v; want 4 of 5, truncated", len(first.Messages), first.Total, first.Truncated)
	}
	rest := page(len(first.Messages), 1000)
	if len(rest.Messages) != 1 || rest.Truncated {
		t.Errorf("the next page: %d, truncated %v; want 1, not truncated", len(rest.Messages), rest.Truncated)
	}
	if p := page(0, 10); len(p.Messages) != 1 || !p.Truncated {
		t.Errorf("page under a bound smaller than one payload: %d, truncated %v; want 1, truncated", len(p.Messages), p.Truncated)
	}
}

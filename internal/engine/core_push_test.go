package engine_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/engine"
)

func TestCorePushCreatesQueueAndDefaultPartition(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	res := e.pushItems(
		api.PushItem{Queue: "orders", Payload: json.RawMessage(`{"n":0}`)},
		api.PushItem{Queue: "orders", Partition: "eu", Payload: json.RawMessage(`{"n":1}`)},
		api.PushItem{Queue: "orders", Payload: json.RawMessage(`{"n":2}`), TransactionID: "t-2", TraceID: "trace-2"},
	)
	for i, r := range res {
		if r.Index != i || r.Status != api.StatusQueued || r.QueueName != "orders" {
			t.Errorf("result %d = %+v, want index %d, status queued, queue orders", i, r, i)
		}
		if _, err := uuid.Parse(r.MessageID); err != nil {
			t.Errorf("result %d message_id %q is not a UUID", i, r.MessageID)
		}
		if _, err := uuid.Parse(r.PartitionID); err != nil {
			t.Errorf("result %d partition_id %q is not a UUID", i, r.PartitionID)
		}
		if r.TransactionID == "" || r.TransactionID != r.TransactionIDCamel {
			t.Errorf("result %d transaction ids %q/%q: want a generated id in both spellings", i, r.TransactionID, r.TransactionIDCamel)
		}
	}
	if res[2].TransactionID != "t-2" || res[2].TraceID != "trace-2" {
		t.Errorf("result 2 = %+v, want the given transaction and trace ids back", res[2])
	}
	if res[0].PartitionID != res[2].PartitionID || res[0].PartitionID == res[1].PartitionID {
		t.Errorf("partition ids %s %s %s: items 0 and 2 share Default, item 1 is in eu", res[0].PartitionID, res[1].PartitionID, res[2].PartitionID)
	}
	if res[0].MessageID == res[2].MessageID {
		t.Errorf("two messages share message_id %s", res[0].MessageID)
	}
	var names []string
	rows, err := e.pool.Query(e.ctx, `SELECT p.name FROM lethe.partitions p JOIN lethe.queues q ON q.id = p.queue_id
		WHERE q.name = 'orders' ORDER BY p.name`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n string
		_ = rows.Scan(&n)
		names = append(names, n)
	}
	rows.Close()
	if strings.Join(names, ",") != "Default,eu" {
		t.Errorf("partitions of orders = %v, want [Default eu]", names)
	}
	if n := e.count(`SELECT count(*) FROM lethe.queues WHERE name = 'orders'`); n != 1 {
		t.Errorf("%d queue rows named orders, want 1", n)
	}
}

func TestCorePushPayloadKinds(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	kinds := []string{`{"a":[1,{"b":null}]}`, `[1,"two",3.5]`, `"text with \"quotes\" and ünïcode"`, `-12.5e3`, `true`, `false`, `null`, ``}
	e.push("kinds", "", kinds...)
	resp := e.popN(engine.PopRequest{Queue: "kinds", Batch: 100}, len(kinds))
	for i, m := range resp.Messages {
		want := kinds[i]
		if want == "" {
			want = "null" // a missing payload is stored as null
		}
		var got, exp any
		if err := json.Unmarshal(m.Data, &got); err != nil {
			t.Errorf("message %d data %q is not JSON: %v", i, m.Data, err)
			continue
		}
		_ = json.Unmarshal([]byte(want), &exp)
		if fmt.Sprint(got) != fmt.Sprint(exp) {
			t.Errorf("message %d data = %s, want %s", i, m.Data, want)
		}
	}
}

func TestCorePushDuplicateTransactionID(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	first := e.pushItems(api.PushItem{Queue: "dedup", Partition: "p1", TransactionID: "tx-a", Payload: json.RawMessage(`1`)})
	if first[0].Status != api.StatusQueued {
		t.Fatalf("first push = %+v, want queued", first[0])
	}
	// A later request repeating the id: duplicate, with the original id.
	again := e.pushItems(
		api.PushItem{Queue: "dedup", Partition: "p1", TransactionID: "tx-b", Payload: json.RawMessage(`2`)},
		api.PushItem{Queue: "dedup", Partition: "p1", TransactionID: "tx-a", Payload: json.RawMessage(`"changed"`)},
	)
	if again[0].Status != api.StatusQueued {
		t.Errorf("new id = %+v, want queued", again[0])
	}
	if again[1].Status != api.StatusDuplicate || again[1].MessageID != first[0].MessageID {
		t.Errorf("repeated id = %+v, want duplicate with the original message_id %s", again[1], first[0].MessageID)
	}
	// Twice within one request: the second is the duplicate of the first.
	within := e.pushItems(
		api.PushItem{Queue: "dedup", Partition: "p1", TransactionID: "tx-c", Payload: json.RawMessage(`3`)},
		api.PushItem{Queue: "dedup", Partition: "p1", TransactionID: "tx-c", Payload: json.RawMessage(`4`)},
	)
	if within[0].Status != api.StatusQueued || within[1].Status != api.StatusDuplicate || within[1].MessageID != within[0].MessageID {
		t.Errorf("same id twice in one request = %+v, want queued then duplicate of it", within)
	}
	// Dedup is per partition: the same id elsewhere is a new message.
	other := e.pushItems(api.PushItem{Queue: "dedup", Partition: "p2", TransactionID: "tx-a", Payload: json.RawMessage(`5`)})
	if other[0].Status != api.StatusQueued || other[0].MessageID == first[0].MessageID {
		t.Errorf("same id in another partition = %+v, want queued as a new message", other[0])
	}
	resp := e.popN(engine.PopRequest{Queue: "dedup", Partition: "p1", Batch: 100}, 3)
	if got := strings.Join(corePayloads(resp), ","); got != "1,2,3" {
		t.Errorf("p1 holds %s, want 1,2,3 (duplicates are not stored)", got)
	}
	if _, n := e.stored(); n != 4 {
		t.Errorf("%d transaction hashes stored, want 4", n)
	}
}

// Many pushers on one partition: offsets follow commit order, nothing is
// lost or stored twice, and group commit folds concurrent pushes together.
func TestCorePushConcurrentOrderAndGroupCommit(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	const pushers, perPusher = 16, 40
	type sent struct {
		pusher, seq int
		msgID       string
	}
	var mu sync.Mutex
	byTxn := map[string]sent{}
	var wg sync.WaitGroup
	errs := make(chan error, pushers)
	for p := range pushers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := range perPusher {
				txn := fmt.Sprintf("p%02d-%03d", p, s)
				res, err := e.eng.Push(e.ctx, []api.PushItem{{Queue: "conc", TransactionID: txn,
					Payload: json.RawMessage(fmt.Sprintf(`{"p":%d,"s":%d}`, p, s))}}, "")
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				byTxn[txn] = sent{p, s, res[0].MessageID}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("push: %v", err)
	}
	total := pushers * perPusher
	seen := map[string]bool{}
	lastOffset := int64(-1)
	lastSeq := make([]int, pushers)
	for i := range lastSeq {
		lastSeq[i] = -1
	}
	for len(seen) < total {
		resp := e.pop(engine.PopRequest{Queue: "conc", Group: "reader", Batch: 97, AutoAck: true})
		if len(resp.Messages) == 0 {
			break
		}
		for _, m := range resp.Messages {
			if m.Offset <= lastOffset {
				t.Fatalf("offset %d after %d: not strictly increasing", m.Offset, lastOffset)
			}
			lastOffset = m.Offset
			s, ok := byTxn[m.TransactionID]
			if !ok || seen[m.TransactionID] {
				t.Fatalf("message %s unknown or delivered twice", m.TransactionID)
			}
			seen[m.TransactionID] = true
			if m.ID != s.msgID {
				t.Errorf("message %s has id %s, push answered %s", m.TransactionID, m.ID, s.msgID)
			}
			if s.seq <= lastSeq[s.pusher] {
				t.Errorf("pusher %d: seq %d delivered after %d (commit order broken)", s.pusher, s.seq, lastSeq[s.pusher])
			}
			lastSeq[s.pusher] = s.seq
		}
	}
	if len(seen) != total {
		t.Fatalf("delivered %d of %d messages", len(seen), total)
	}
	if lastOffset != int64(total-1) {
		t.Errorf("last offset %d, want %d (no gaps)", lastOffset, total-1)
	}
	st, _ := e.stored()
	segments, frames := st.Segments, st.Messages
	t.Logf("%d messages from %d concurrent pushers in %d segments", total, pushers, segments)
	if frames != int64(total) {
		t.Errorf("segments hold %d frames, want %d", frames, total)
	}
	if segments >= int64(total) {
		t.Errorf("%d segments for %d messages: group commit coalesced nothing", segments, total)
	}
}

func TestCorePushPayloadOverLimit(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{MaxPayloadBytes: 2048})
	e.push("sized", "", `"small"`)
	before := e.rowCounts()
	big := `"` + strings.Repeat("x", 2100) + `"`
	_, err := e.eng.Push(e.ctx, []api.PushItem{
		{Queue: "sized", Payload: json.RawMessage(`"fine"`)},
		{Queue: "other-queue", Payload: json.RawMessage(big)},
	}, "")
	if !errors.Is(err, engine.ErrTooLarge) {
		t.Fatalf("push of %d bytes with limit 2048: err %v, want ErrTooLarge", len(big), err)
	}
	coreSameCounts(t, before, e.rowCounts())
	// Exactly at the limit is fine.
	exact := `"` + strings.Repeat("y", 2046) + `"`
	e.push("sized", "", exact)
}

func TestCorePushRejectsBadItems(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{MaxItems: 5})
	long := strings.Repeat("n", 513)
	cases := map[string][]api.PushItem{
		"too many items":     make([]api.PushItem, 6),
		"missing queue":      {{Payload: json.RawMessage(`1`)}},
		"long queue":         {{Queue: long}},
		"control char queue": {{Queue: "a\x00b"}},
		"long partition":     {{Queue: "q", Partition: long}},
		"invalid payload":    {{Queue: "q", Payload: json.RawMessage(`{nope`)}},
		"long txn id":        {{Queue: "q", TransactionID: long}},
		"second item bad":    {{Queue: "q"}, {Queue: ""}},
	}
	for name, items := range cases {
		for i := range items {
			if items[i].Queue == "" && name == "too many items" {
				items[i].Queue = "q"
			}
		}
		_, err := e.eng.Push(e.ctx, items, "")
		if !errors.Is(err, engine.ErrInvalid) {
			t.Errorf("%s: err %v, want ErrInvalid", name, err)
		}
	}
	coreSameCounts(t, map[string]int64{"queues": 0, "partitions": 0, "stored segments": 0, "stored hashes": 0}, e.rowCounts())
	// No items at all is Queen's empty push: answered with no results,
	// nothing written.
	if res, err := e.eng.Push(e.ctx, nil, ""); err != nil || res == nil || len(res) != 0 {
		t.Errorf("empty push = %v, %v; want no results and no error", res, err)
	}
	coreSameCounts(t, map[string]int64{"queues": 0, "partitions": 0, "stored segments": 0, "stored hashes": 0}, e.rowCounts())
}

// Items without a transactionId (lethe mints one, and does not look it up)
// mixed in one request with items that repeat a producer's id: every
// repeat is still found, wherever the minted ones stand in the request.
func TestCorePushDuplicateAmongMintedIDs(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	item := func(txn, data string) api.PushItem {
		return api.PushItem{Queue: "mixed", Partition: "p", TransactionID: txn, Payload: json.RawMessage(data)}
	}
	first := e.pushItems(item("tx-e", `1`))
	got := e.pushItems(item("tx-f", `2`), item("", `3`), item("tx-e", `4`), item("", `5`), item("tx-f", `6`))
	want := []string{api.StatusQueued, api.StatusQueued, api.StatusDuplicate, api.StatusQueued, api.StatusDuplicate}
	for i, r := range got {
		if r.Status != want[i] {
			t.Errorf("item %d = %+v, want %s", i, r, want[i])
		}
	}
	if got[2].MessageID != first[0].MessageID || got[4].MessageID != got[0].MessageID {
		t.Errorf("repeats answered %s and %s, want %s and %s", got[2].MessageID, got[4].MessageID, first[0].MessageID, got[0].MessageID)
	}
	// A minted id first, then a repeat.
	if again := e.pushItems(item("", `7`), item("tx-e", `8`)); again[0].Status != api.StatusQueued || again[1].Status != api.StatusDuplicate {
		t.Errorf("minted then repeated = %+v, want queued then duplicate", again)
	}
	resp := e.popN(engine.PopRequest{Queue: "mixed", Partition: "p", Batch: 100}, 5)
	if got := strings.Join(corePayloads(resp), ","); got != "1,2,3,5,7" {
		t.Errorf("the partition holds %s, want 1,2,3,5,7", got)
	}
}

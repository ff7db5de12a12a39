package engine_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/engine"
	"github.com/lethe-mq/lethe/internal/frame"
	"github.com/lethe-mq/lethe/internal/inspect"
	"github.com/lethe-mq/lethe/internal/store"
	"github.com/lethe-mq/lethe/internal/store/storetest"
)

// nulTxn is a transaction id PostgreSQL text cannot hold.
const nulTxn = "nul\x00id"

// poisonPartition stores, in partition bad of queue poison, what lethe never
// writes itself, between ordinary messages: a frame whose transaction id
// holds a NUL, one whose payload is not JSON, and a truncated segment.
// Offsets: 0 "b0"; 1 NUL id; 2 not JSON; 3 "b3"; 4 "b4"; 5 damaged; 6 "b6".
// Partition good holds "g1", "g2".
func poisonPartition(e *coreEnv) (bad uuid.UUID) {
	e.t.Helper()
	e.push("poison", "good", `"g1"`, `"g2"`)
	bad = uuid.MustParse(e.push("poison", "bad", `"b0"`)[0].PartitionID)
	enc := func(txn, payload string) []byte {
		return frame.Encode(frame.Message{CreatedAt: coreT0, TxnID: txn, Payload: []byte(payload)})
	}
	segs := []storetest.Segment{
		{Base: 1, Count: 3, Frames: slices.Concat(enc(nulTxn, `"b1"`), enc("badjson", `{not json`), enc("b3", `"b3"`)),
			Hashes: []int64{store.TxnHash(nulTxn), store.TxnHash("badjson"), store.TxnHash("b3")}},
		{Base: 4, Count: 2, Frames: append(enc("b4", `"b4"`), 0, 0, 0, 99, 1),
			Hashes: []int64{store.TxnHash("b4"), store.TxnHash("b5")}},
	}
	for _, s := range segs {
		s.Partition, s.FirstAt, s.LastAt = bad, coreT0, coreT0
		if err := storetest.Write(e.ctx, e.pool, s); err != nil {
			e.t.Fatal(err)
		}
	}
	e.pushItems(api.PushItem{Queue: "poison", Partition: "bad", TransactionID: "b6", Payload: json.RawMessage(`"b6"`)})
	return bad
}

// Whatever a segment holds, pop serves the rest of its partition and the
// other partitions; what cannot be served goes to the dead letters, counted;
// acks (including of the NUL id) and the dead letter listing work.
func TestCoreCorruptMessagesDoNotBreakPopOrAck(t *testing.T) {
	t.Parallel()
	h, hooks := recordHooks()
	e := newCoreEnv(t, engine.Config{Hooks: hooks})
	bad := poisonPartition(e)
	var got []string
	var msgs []api.Message
	for range 3 {
		resp := e.pop(engine.PopRequest{Queue: "poison", Group: "g", Batch: 10, MaxPartitions: 2})
		msgs = append(msgs, resp.Messages...)
		got = append(got, corePayloads(resp)...)
	}
	slices.Sort(got)
	if strings.Join(got, " ") != `"b0" "b1" "b3" "b4" "b6" "g1" "g2"` {
		t.Fatalf("popped %v, want every readable message of both partitions", got)
	}
	if n := h.get("unreadable poison"); n != 2 {
		t.Errorf("unreadable counted %d, want 2 (the payload that is not JSON, the damaged frame)", n)
	}
	dls, total, err := deadLetterPage(readerOf(e.eng).DeadLetters(e.ctx, inspect.DeadLetterFilter{Queue: "poison", Group: "g"}))
	if err != nil || total != 2 {
		t.Fatalf("dead letters = %d, %v; want the 2 unreadable messages", total, err)
	}
	for _, d := range dls {
		if (d.Offset != 2 && d.Offset != 5) || !strings.Contains(d.ErrorMessage, "unreadable") || d.PartitionID != bad.String() {
			t.Errorf("dead letter %+v: want offset 2 or 5 of the bad partition, unreadable", d)
		}
	}
	for _, m := range msgs {
		if m.TransactionID == nulTxn && m.Offset != 1 {
			t.Errorf("the NUL transaction id came back at offset %d", m.Offset)
		}
		e.ackMsg(m, api.AckCompleted)
	}
	if again := e.pop(engine.PopRequest{Queue: "poison", Group: "g", Batch: 10, MaxPartitions: 2}); len(again.Messages) != 0 {
		t.Errorf("after acking everything, popped %v", corePayloads(again))
	}
	if n := e.count(`SELECT committed FROM lethe.cursors WHERE partition_id = $1 AND group_name = 'g'`, bad); n != 6 {
		t.Errorf("committed on the bad partition = %d, want 6", n)
	}
}

// The NUL id dead-letters like any message: its stored copy has the NUL
// replaced, and a payload jsonb refuses is kept as NULL with the reason.
func TestCoreCorruptMessagesDeadLetter(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	bad := poisonPartition(e)
	// Offset 7: a payload jsonb refuses, which the push path refuses too, so
	// only an older lethe could have stored it.
	storeRaw(e, bad, 7, "nuljson", `"\u0000 jsonb refuses this"`)
	resp := e.popN(engine.PopRequest{Queue: "poison", Partition: "bad", Group: "h", Batch: 2}, 2)
	e.ackMsg(resp.Messages[0], api.AckCompleted)
	if r := e.ackMsg(resp.Messages[1], api.AckDLQ); !r.DLQ {
		t.Errorf("dlq ack of the NUL id = %+v", r)
	}
	var txn string
	if err := e.pool.QueryRow(e.ctx, `SELECT txn_id FROM lethe.dead_letters WHERE partition_id = $1 AND msg_offset = 1`, bad).Scan(&txn); err != nil {
		t.Fatal(err)
	}
	if txn != "nul\uFFFDid" {
		t.Errorf("dead letter txn_id %q, want the NUL replaced by U+FFFD", txn)
	}
	for {
		resp := e.pop(engine.PopRequest{Queue: "poison", Partition: "bad", Group: "h", Batch: 10})
		if len(resp.Messages) == 0 {
			break
		}
		for _, m := range resp.Messages {
			e.ackMsg(m, api.AckDLQ)
		}
	}
	var payload *string
	var reason string
	if err := e.pool.QueryRow(e.ctx, `SELECT payload::text, error FROM lethe.dead_letters WHERE partition_id = $1 AND msg_offset = 7`, bad).
		Scan(&payload, &reason); err != nil {
		t.Fatal(err)
	}
	if payload != nil || !strings.Contains(reason, "payload could not be kept") {
		t.Errorf("dead letter of a payload jsonb refuses: payload %v error %q", payload, reason)
	}
	if _, total, err := deadLetterPage(readerOf(e.eng).DeadLetters(e.ctx, inspect.DeadLetterFilter{Queue: "poison"})); err != nil || total != 7 {
		t.Errorf("dead letters listed: %d, %v; want 7 (4 dlq acks, 3 unreadable)", total, err)
	}
}

// storeRaw writes one frame at offset base of pid, as an older lethe would
// have, bypassing the push path's validation.
func storeRaw(e *coreEnv, pid uuid.UUID, base int64, txn, payload string) {
	e.t.Helper()
	seg := storetest.Segment{Partition: pid, Base: base, Count: 1, FirstAt: coreT0, LastAt: coreT0,
		Frames: frame.Encode(frame.Message{CreatedAt: coreT0, TxnID: txn, Payload: []byte(payload)}),
		Hashes: []int64{store.TxnHash(txn)}}
	if err := storetest.Write(e.ctx, e.pool, seg); err != nil {
		e.t.Fatal(err)
	}
}

// Browsing lists what can be read and counts what cannot; a single message
// that cannot be served answers 409, the others are found.
func TestCoreCorruptMessagesBrowse(t *testing.T) {
	t.Parallel()
	h, hooks := recordHooks()
	e := newCoreEnv(t, engine.Config{Hooks: hooks})
	bad := poisonPartition(e)
	page, err := readerOf(e.eng).BrowseMessages(e.ctx, inspect.MessageFilter{Queue: "poison"})
	if err != nil {
		t.Fatalf("browse: %v", err)
	}
	if len(page.Messages) != 8 || page.Unreadable != 1 {
		t.Errorf("browse listed %d messages, %d unreadable; want 8 and 1 (the damaged frame)", len(page.Messages), page.Unreadable)
	}
	if h.get("unreadable poison") != 1 {
		t.Errorf("browse counted %d unreadable", h.get("unreadable poison"))
	}
	if _, err := readerOf(e.eng).GetMessage(e.ctx, bad.String(), "badjson"); !errors.Is(err, engine.ErrConflict) {
		t.Errorf("get the message that is not JSON: %v, want ErrConflict", err)
	}
	if m, err := readerOf(e.eng).GetMessage(e.ctx, bad.String(), nulTxn); err != nil || m.Offset != 1 || string(m.Payload) != `"b1"` {
		t.Errorf("get the NUL id: %+v, %v", m, err)
	}
	if m, err := readerOf(e.eng).GetMessage(e.ctx, bad.String(), "b6"); err != nil || m.Offset != 6 {
		t.Errorf("get b6: %+v, %v", m, err)
	}
}

// A partition whose stored consumer state cannot be used is skipped by pop
// (logged and counted) and its acks answer success:false; the other
// partitions are served.
func TestCoreCorruptCursorSkipsOnlyItsPartition(t *testing.T) {
	t.Parallel()
	h, hooks := recordHooks()
	e := newCoreEnv(t, engine.Config{Hooks: hooks})
	e.push("stuck", "a", `"a0"`, `"a1"`)
	e.push("stuck", "b", `"b0"`)
	first := e.popN(engine.PopRequest{Queue: "stuck", Partition: "a", Group: "g"}, 1)
	// A lease of two offsets with one hash: not something lethe writes.
	if _, err := e.pool.Exec(e.ctx, `UPDATE lethe.cursors SET lease_offsets = '{0,1}', lease_until = $1
		WHERE group_name = 'g'`, coreT0); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(engine.MaxPopTimeout)
	resp := e.pop(engine.PopRequest{Queue: "stuck", Group: "g", Batch: 10, MaxPartitions: 2})
	if got := strings.Join(corePayloads(resp), " "); got != `"b0"` {
		t.Errorf("pop over a partition with a corrupt cursor = %s, want the other partition's message", got)
	}
	if h.get("failed stuck pop") != 1 {
		t.Errorf("partition failures counted: %v", h.n)
	}
	res := e.ack(api.AckRequest{TransactionID: first.Messages[0].TransactionID, PartitionID: first.PartitionID, ConsumerGroup: "g"})
	if res[0].Success || !strings.Contains(res[0].Error, "stored state") {
		t.Errorf("ack on the corrupt cursor = %+v, want success false naming the stored state", res[0])
	}
	if h.get("failed stuck ack") != 1 {
		t.Errorf("ack failures counted: %v", h.n)
	}
}

// The stored frames are encoded into the HTTP answer verbatim, so what a pop
// answers over a poisoned partition must still be one valid JSON document.
func TestCoreCorruptMessagesPopAnswerIsJSON(t *testing.T) {
	t.Parallel()
	e := newCoreEnv(t, engine.Config{})
	poisonPartition(e)
	resp := e.pop(engine.PopRequest{Queue: "poison", Partition: "bad", Group: "g", Batch: 10})
	for _, m := range resp.Messages {
		if !json.Valid(m.Data) {
			t.Errorf("message %d carries data %q, which is not JSON", m.Offset, m.Data)
		}
	}
}

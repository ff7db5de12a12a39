package httpapi

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/client/api"
)

// sameJSON decodes both encodings generically and compares them, so key
// order does not matter but every value does.
func sameJSON(t *testing.T, ours, std []byte) {
	t.Helper()
	var a, b any
	if err := json.Unmarshal(ours, &a); err != nil {
		t.Fatalf("our encoding is not JSON: %v\n%s", err, ours)
	}
	if err := json.Unmarshal(std, &b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("encodings differ:\n ours %s\n std  %s", ours, std)
	}
}

func TestPopResponseEncodingMatchesStdlib(t *testing.T) {
	t.Parallel()
	resp := &api.PopResponse{Success: true, Queue: "q<&>\u2028", PartitionID: "p", LeaseID: "", ConsumerGroup: "",
		PartitionsClaimed: 1, Messages: []api.Message{
			{ID: "id", TransactionID: "t\"x\\\n\x01\xff", Data: json.RawMessage(`{"a":[1,2,{"b":null}]}`), CreatedAt: "2026",
				Queue: "q", Partition: "Default", PartitionID: "p", LeaseID: "l", RetryCount: 2, Offset: 7},
			{ID: "id2", TransactionID: "ü€𝄞", Data: nil, TraceID: "tr", ProducerSub: "s", ConsumerGroup: "g"},
		}}
	std, _ := json.Marshal(resp)
	sameJSON(t, appendPopResponse(nil, resp), std)

	at := time.Date(2030, 1, 2, 3, 4, 5, 600, time.UTC)
	resp.Gaps = []api.Gap{
		{Queue: "q", Partition: "p\"1", PartitionID: "pid", FromOffset: 3, ToOffset: 9, Messages: 6,
			Rules: []string{"retention", "max_wait"}, DeletedAt: &at, Reason: "r\u2028"},
		{Queue: "q", Partition: "p2", PartitionID: "pid2", Rules: []string{}, Reason: "unknown"},
	}
	std, _ = json.Marshal(resp)
	sameJSON(t, appendPopResponse(nil, resp), std)
}

func TestPushResultsEncodingMatchesStdlib(t *testing.T) {
	t.Parallel()
	rs := []api.PushResult{
		{Index: 0, TransactionID: "a", TransactionIDCamel: "a", Status: "queued", MessageID: "m", PartitionID: "p", QueueName: "q"},
		{Index: 1, TransactionID: "b\t", TransactionIDCamel: "b\t", Status: "duplicate", TraceID: "x", QueueName: "q", Error: "e"},
	}
	std, _ := json.Marshal(rs)
	sameJSON(t, appendPushResults(nil, rs), std)

	// The answer to a push of 100 fits the buffer sized for it, so it is
	// written without growing one.
	rs = rs[:0]
	for i := range 100 {
		id := "0190f3a5-8c1e-7b42-9d3a-5e6f7a8b9c0d"
		rs = append(rs, api.PushResult{Index: i, TransactionID: id, TransactionIDCamel: id, Status: "queued", MessageID: id,
			PartitionID: id, TraceID: id, QueueName: "orders-eu-west"})
	}
	if got, room := len(appendPushResults(nil, rs)), pushResultsLen(rs); got > room {
		t.Errorf("the answer to a push of 100 takes %d bytes, more than the %d sized for it", got, room)
	}
}

// stdlibEncoding is what writeJSON sends for v.
func stdlibEncoding(t *testing.T, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(v); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestAckResultsEncodingIsStdlibsByteForByte(t *testing.T) {
	t.Parallel()
	odd := []string{"", "plain", `quote " and backslash \`, "control \x00\x01\x1f\t\n\r\b\f\x7f",
		"html <script>&amp;</script>", "non-ASCII é€𝄞", "separators \u2028 \u2029", "bad UTF-8 \xff\xc3 \xed\xa0\x80"}
	var rs []api.AckResult
	for i, s := range odd {
		rs = append(rs, api.AckResult{Index: i, TransactionID: s, Success: i%2 == 0, Error: s,
			QueueName: odd[(i+1)%len(odd)], PartitionName: odd[(i+2)%len(odd)], LeaseReleased: i%3 == 0, DLQ: i%4 == 1})
	}
	rs = append(rs,
		api.AckResult{}, // every omitempty field empty
		api.AckResult{Index: 1 << 40, TransactionID: "t", Success: true, QueueName: "q", PartitionName: "Default", LeaseReleased: true},
		api.AckResult{Index: -1, Error: "lease gone", DLQ: true},
	)
	for _, batch := range [][]api.AckResult{rs, rs[:1], {}, nil} {
		want := stdlibEncoding(t, batch)
		if got := appendAckResults(nil, batch); !bytes.Equal(got, want) {
			t.Fatalf("appendAckResults\n got %q\nwant %q", got, want)
		}
	}
}

// FuzzAckResultsMatchStdlib checks every field of an ack answer, and that
// appending keeps what the buffer held.
func FuzzAckResultsMatchStdlib(f *testing.F) {
	f.Add(0, "t", "", "q", "Default", true, true, false)
	f.Add(7, "<&>\u2028", "\xff\\\"", "", "é", false, false, true)
	f.Fuzz(func(t *testing.T, index int, txn, errText, queue, partition string, success, released, dlq bool) {
		rs := []api.AckResult{
			{Index: index, TransactionID: txn, Success: success, Error: errText, QueueName: queue,
				PartitionName: partition, LeaseReleased: released, DLQ: dlq},
			{Index: index + 1, TransactionID: errText, Error: txn, QueueName: partition, PartitionName: queue},
		}
		want := stdlibEncoding(t, rs)
		if got := appendAckResults([]byte("x"), rs); !bytes.Equal(got, append([]byte("x"), want...)) {
			t.Fatalf("appendAckResults\n got %q\nwant x%q", got, want)
		}
	})
}

// FuzzPopResponseMatchesStdlib checks the whole pop answer: every string
// field, the nullable ones (traceId, producerSub: null when empty), the
// omitted-when-empty ones and the numbers.
func FuzzPopResponseMatchesStdlib(f *testing.F) {
	f.Add("q", "p", "l", "g", "t", "", "", "2026", 3, int64(7), true)
	f.Add("", "", "", "", "\xff<", "tr", "sub", "", 0, int64(-1), false)
	f.Fuzz(func(t *testing.T, queue, partition, leaseID, group, txn, trace, producer, created string, retries int, offset int64, success bool) {
		resp := &api.PopResponse{Success: success, Queue: queue, Partition: partition, PartitionID: partition,
			LeaseID: leaseID, ConsumerGroup: group, PartitionsClaimed: retries, Messages: []api.Message{
				{ID: txn, TransactionID: txn, TraceID: api.NullString(trace), Data: json.RawMessage(`{"k":[1,"v"]}`),
					ProducerSub: api.NullString(producer), CreatedAt: created, Queue: queue, Partition: partition,
					PartitionID: partition, LeaseID: leaseID, ConsumerGroup: group, RetryCount: retries, Offset: offset},
				{ID: "2", TransactionID: trace, TraceID: api.NullString(producer), ProducerSub: api.NullString(trace)},
			}}
		std, err := json.Marshal(resp)
		if err != nil {
			t.Fatal(err)
		}
		sameJSON(t, appendPopResponse(nil, resp), std)
	})
}

func TestPopMessageNullsEmptyTraceAndProducer(t *testing.T) {
	t.Parallel()
	got := string(appendMessage(nil, &api.Message{ID: "i", TransactionID: "t", Data: json.RawMessage(`1`)}))
	for _, want := range []string{`"traceId":null`, `"producerSub":null`} {
		if !bytes.Contains([]byte(got), []byte(want)) {
			t.Errorf("message %s lacks %s (Queen sends null for a message without one)", got, want)
		}
	}
}

func FuzzAppendStringMatchesStdlib(f *testing.F) {
	for _, s := range []string{"", "plain", "<&>", "\u2028\u2029", "\xff\xfe", "\x00\x1f", "ü€𝄞", `"\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		std, _ := json.Marshal(s)
		if ours := appendString(nil, s); !bytes.Equal(ours, std) {
			t.Fatalf("appendString(%q) = %s, encoding/json = %s", s, ours, std)
		}
	})
}

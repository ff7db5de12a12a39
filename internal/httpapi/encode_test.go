package httpapi

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/lethe-mq/lethe/api"
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
}

func TestPushResultsEncodingMatchesStdlib(t *testing.T) {
	t.Parallel()
	rs := []api.PushResult{
		{Index: 0, TransactionID: "a", TransactionIDCamel: "a", Status: "queued", MessageID: "m", PartitionID: "p", QueueName: "q"},
		{Index: 1, TransactionID: "b\t", TransactionIDCamel: "b\t", Status: "duplicate", TraceID: "x", QueueName: "q", Error: "e"},
	}
	std, _ := json.Marshal(rs)
	sameJSON(t, appendPushResults(nil, rs), std)
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

package pushdec

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/lethe-mq/lethe/client/api"
)

func TestDecodeAckBatchValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body string
		want api.AckBatchRequest
	}{
		{
			name: "all fields",
			body: `{"consumerGroup":"g","acknowledgments":[{"transactionId":"t","partitionId":"p","leaseId":"l","status":"failed","consumerGroup":"h","error":"e"}]}`,
			want: api.AckBatchRequest{ConsumerGroup: "g", Acknowledgments: []api.AckRequest{
				{TransactionID: "t", PartitionID: "p", LeaseID: "l", Status: "failed", ConsumerGroup: "h", Error: "e"}}},
		},
		{
			name: "escapes and surrogate pairs",
			body: `{"acknowledgments":[{"error":"a\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00","transactionId":"\uD800\uDC00x"}]}`,
			want: api.AckBatchRequest{Acknowledgments: []api.AckRequest{{Error: "a\"\\/\b\f\n\r\té😀", TransactionID: "\U00010000x"}}},
		},
		{
			name: "keys match case-insensitively, with encoding/json's folding",
			body: "{\"ACKNOWLEDGMENTS\":[{\"TransactionID\":\"t\",\"tran\u017factionid\":\"s\",\"\\u006ceaseId\":\"l\"}],\"ConsumerGroup\":\"g\"}",
			want: api.AckBatchRequest{ConsumerGroup: "g", Acknowledgments: []api.AckRequest{{TransactionID: "s", LeaseID: "l"}}},
		},
		{
			name: "last duplicate wins, null keeps the earlier string",
			body: `{"consumerGroup":"a","consumerGroup":"b","consumerGroup":null,"acknowledgments":[{"status":"x","status":"y","error":"e","error":null}]}`,
			want: api.AckBatchRequest{ConsumerGroup: "b", Acknowledgments: []api.AckRequest{{Status: "y", Error: "e"}}},
		},
		{
			name: "repeated acknowledgments merge into the earlier elements",
			body: `{"acknowledgments":[{"transactionId":"a","leaseId":"l"},{"transactionId":"b"}],"acknowledgments":[{"transactionId":"c"}],"acknowledgments":[null,{}]}`,
			want: api.AckBatchRequest{Acknowledgments: []api.AckRequest{{TransactionID: "c", LeaseID: "l"}, {TransactionID: "b"}}},
		},
		{
			name: "empty acknowledgments is empty, not nil",
			body: `{"acknowledgments":[]}`,
			want: api.AckBatchRequest{Acknowledgments: []api.AckRequest{}},
		},
		{
			name: "null acknowledgments is nil",
			body: `{"acknowledgments":[{}],"acknowledgments":null}`,
			want: api.AckBatchRequest{},
		},
		{
			name: "missing acknowledgments is nil",
			body: `{"consumerGroup":"g"}`,
			want: api.AckBatchRequest{ConsumerGroup: "g"},
		},
		{
			name: "a null ack is a zero ack",
			body: `{"acknowledgments":[null,{"transactionId":"t"}]}`,
			want: api.AckBatchRequest{Acknowledgments: []api.AckRequest{{}, {TransactionID: "t"}}},
		},
		{
			name: "unknown keys are skipped",
			body: `{"x":{"acknowledgments":[{"transactionId":"no"}]},"acknowledgments":[{"transactionId":"yes","retries":[1,{"leaseId":"no"}]}]}`,
			want: api.AckBatchRequest{Acknowledgments: []api.AckRequest{{TransactionID: "yes"}}},
		},
		{
			name: "repeated ids are decoded in every ack",
			body: `{"acknowledgments":[{"partitionId":"p","leaseId":"l","status":"completed"},{"partitionId":"p","leaseId":"l","status":"completed"},{"partitionId":"q","leaseId":"l\n","status":"completed"}]}`,
			want: api.AckBatchRequest{Acknowledgments: []api.AckRequest{
				{PartitionID: "p", LeaseID: "l", Status: "completed"},
				{PartitionID: "p", LeaseID: "l", Status: "completed"},
				{PartitionID: "q", LeaseID: "l\n", Status: "completed"}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			requireAckSameAsStdlib(t, []byte(tt.body))
			got, err := DecodeAckBatch([]byte(tt.body))
			if err != nil {
				t.Fatalf("DecodeAckBatch: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("DecodeAckBatch\n got %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

func TestDecodeAckBatchErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		body string
		want string
	}{
		{``, `malformed JSON at byte 0: unexpected end of input`},
		{`null`, `ack batch body must be a JSON object, got null (at byte 0)`},
		{` [{"transactionId":"t"}]`, `ack batch body must be a JSON object, got array (at byte 1)`},
		{`"acks"`, `ack batch body must be a JSON object, got string (at byte 0)`},
		{`{"acknowledgments":{}}`, `acknowledgments must be an array of acks, got object (at byte 19)`},
		{`{"acknowledgments":"t"}`, `acknowledgments must be an array of acks, got string (at byte 19)`},
		{`{"acknowledgments":[1]}`, `acknowledgments[0] must be an object, got number (at byte 20)`},
		{`{"acknowledgments":[{},{},{},{"leaseId":5}]}`, `acknowledgments[3].leaseId must be a string, got number (at byte 40)`},
		{`{"consumerGroup":true}`, `consumerGroup must be a string, got boolean (at byte 17)`},
		{`{"acknowledgments":[{"Status":["completed"]}]}`, `acknowledgments[0].Status must be a string, got array (at byte 30)`},
		{`{"acknowledgments":[{"transactionId":"t",}]}`, `malformed JSON at byte 41 in acknowledgments[0]: invalid character '}' looking for beginning of object key string`},
		{`{"acknowledgments":[{"transactionId":"t"},]}`, `malformed JSON at byte 42 in acknowledgments[1]: invalid character ']' looking for beginning of value`},
		{`{"acknowledgments":[{"retries":01}]}`, `malformed JSON at byte 32 in acknowledgments[0]: invalid character '1' after object key:value pair`},
		{`{"acknowledgments":[{"transactionId":"\q"}]}`, `malformed JSON at byte 39 in acknowledgments[0].transactionId: invalid character 'q' in string escape code`},
		{`{"acknowledgments":[{"transactionId":"t"`, `malformed JSON at byte 40 in acknowledgments[0]: unexpected end of input`},
		{`{"acknowledgments":[]} {}`, `malformed JSON at byte 23: invalid character '{' after top-level value`},
		// Well-formed, but PostgreSQL cannot store it.
		{`{"acknowledgments":[{"transactionId":"a\u0000b"}]}`, `acknowledgments[0].transactionId holds \u0000, which PostgreSQL cannot store (at byte 39)`},
		{`{"acknowledgments":[{"error":"\ud800x"}]}`, `acknowledgments[0].error holds a lone UTF-16 surrogate escape (\uD800 to \uDFFF without its pair) (at byte 30)`},
		{"{\"consumerGroup\":\"g\xff\",\"acknowledgments\":[]}", `consumerGroup holds bytes that are not UTF-8 (at byte 19)`},
		{`{"acknowledgments":[{"retries":1e400}]}`, `acknowledgments[0].retries is a number beyond the range of a float64 (about ±1.8e308) (at byte 31)`},
		{`{"x":{"\u0000":1},"acknowledgments":[]}`, `x holds \u0000, which PostgreSQL cannot store (at byte 7)`},
	}
	for _, tt := range tests {
		t.Run(tt.body, func(t *testing.T) {
			t.Parallel()
			requireAckSameAsStdlib(t, []byte(tt.body))
			_, err := DecodeAckBatch([]byte(tt.body))
			if err == nil {
				t.Fatalf("DecodeAckBatch(%q) succeeded, want error %q", tt.body, tt.want)
			}
			if err.Error() != tt.want {
				t.Fatalf("DecodeAckBatch(%q) error\n got %q\nwant %q", tt.body, err.Error(), tt.want)
			}
			if !errors.Is(err, ErrSyntax) {
				t.Fatalf("error %v does not wrap ErrSyntax", err)
			}
		})
	}
}

// TestDecodeAckBatchDepthLimit checks the 10000-level limit, counting the
// body, the acknowledgments array and the ack as the first three levels.
func TestDecodeAckBatchDepthLimit(t *testing.T) {
	t.Parallel()
	inAck := func(levels int) []byte {
		return []byte(`{"acknowledgments":[{"x":` + strings.Repeat("[", levels) + strings.Repeat("]", levels) + `}]}`)
	}
	topLevel := func(levels int) []byte {
		return []byte(`{"x":` + strings.Repeat(`{"a":`, levels) + "1" + strings.Repeat("}", levels) + `,"acknowledgments":[]}`)
	}
	for _, body := range [][]byte{inAck(9997), inAck(9998), topLevel(9999), topLevel(10000)} {
		requireAckSameAsStdlib(t, body)
	}
	for _, body := range [][]byte{inAck(9998), topLevel(10000)} {
		_, err := DecodeAckBatch(body)
		if err == nil || !strings.Contains(err.Error(), "exceeded max depth") {
			t.Fatalf("depth 10001: error %v, want exceeded max depth", err)
		}
	}
}

func TestDecodeAckBatchSharesRepeatedStrings(t *testing.T) { // not parallel: it counts allocations
	req, err := DecodeAckBatch(ackBenchBody)
	if err != nil {
		t.Fatal(err)
	}
	a, b := req.Acknowledgments[0], req.Acknowledgments[1]
	if a.TransactionID == b.TransactionID || a.PartitionID != b.PartitionID || a.Status != "completed" || req.ConsumerGroup != "g" {
		t.Fatalf("acks = %+v, %+v; want distinct transaction ids, one partition", a, b)
	}
	allocs := testing.AllocsPerRun(20, func() {
		if _, err := DecodeAckBatch(ackBenchBody); err != nil {
			t.Fatal(err)
		}
	})
	// One allocation per ack for its transaction id (the partition, lease
	// and status repeat the first ack's), plus the slice, grown once, and
	// the consumer group.
	if allocs > 100+4 {
		t.Fatalf("DecodeAckBatch made %.0f allocations for 100 acks, want at most 104", allocs)
	}
}

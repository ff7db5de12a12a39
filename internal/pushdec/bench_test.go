package pushdec

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/lethe-mq/lethe/client/api"
)

// pushBody builds a push body of n items whose payloads are objects of about
// payloadSize bytes, shaped like typical event data: short keys, strings
// (some escaped), numbers, booleans, nested objects and arrays.
func pushBody(n, payloadSize int) []byte {
	var b strings.Builder
	b.WriteString(`{"items":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"queue":"orders","partition":"customer-%d","transactionId":"0195f6c2-7d1e-7a3b-9c4d-%012d","traceId":"trace-%d","payload":`, i%4, i, i)
		b.WriteString(payload(i, payloadSize))
		b.WriteByte('}')
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

func payload(i, size int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"orderId":%d,"customer":{"id":"c-%d","name":"Ada Lovelace","email":"ada@example.com","vip":true},"total":1234.56,"currency":"EUR","items":[`, i, i)
	for j := 0; b.Len() < size-120; j++ {
		if j > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"sku":"SKU-%05d","qty":%d,"price":%d.99,"note":"gift \"wrap\" please"}`, j, j+1, j*3)
	}
	b.WriteString(`],"shipped":false,"coupon":null,"createdAt":"2025-01-02T03:04:05.678Z","ratio":-1.5e-3}`)
	return b.String()
}

var benchBody = pushBody(100, 1024)

func BenchmarkDecode(b *testing.B) {
	b.SetBytes(int64(len(benchBody)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(benchBody); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStdlib(b *testing.B) {
	b.SetBytes(int64(len(benchBody)))
	b.ReportAllocs()
	for b.Loop() {
		var req api.PushRequest
		if err := json.Unmarshal(benchBody, &req); err != nil {
			b.Fatal(err)
		}
	}
}

func TestBenchBodyMatchesStdlib(t *testing.T) {
	t.Parallel()
	requireSameAsStdlib(t, benchBody)
	req, err := Decode(benchBody)
	if err != nil || len(req.Items) != 100 {
		t.Fatalf("Decode(benchBody) = %d items, %v; want 100 items", len(req.Items), err)
	}
	if n := len(req.Items[0].Payload); n < 900 || n > 1100 {
		t.Fatalf("payload is %d bytes, want about 1 KiB", n)
	}
}

// ackBody builds an ack batch of n acks shaped like the acks of one pop:
// UUID transaction ids, and one partition and lease for all of them.
func ackBody(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"consumerGroup":"g","acknowledgments":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"transactionId":"0195f6c2-7d1e-7a3b-9c4d-%012d","partitionId":"0195f6c1-0a2b-7c3d-8e4f-5a6b7c8d9e0f",`+
			`"leaseId":"0195f6c3-1b2c-7d3e-9f40-6b7c8d9e0f1a","status":"completed"}`, i)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

var ackBenchBody = ackBody(100)

func BenchmarkDecodeAckBatch(b *testing.B) {
	b.SetBytes(int64(len(ackBenchBody)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeAckBatch(ackBenchBody); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStdlibAckBatch(b *testing.B) {
	b.SetBytes(int64(len(ackBenchBody)))
	b.ReportAllocs()
	for b.Loop() {
		var req api.AckBatchRequest
		if err := json.Unmarshal(ackBenchBody, &req); err != nil {
			b.Fatal(err)
		}
	}
}

func TestAckBenchBodyMatchesStdlib(t *testing.T) {
	t.Parallel()
	req, ok := requireAckSameAsStdlib(t, ackBenchBody)
	if !ok || len(req.Acknowledgments) != 100 || len(req.Acknowledgments[0].TransactionID) != 36 {
		t.Fatalf("DecodeAckBatch(ackBenchBody) = %d acks, want 100 with 36-byte transaction ids", len(req.Acknowledgments))
	}
}

package httpapi

import (
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/lethe-mq/lethe/client/api"
)

// The hottest answers, push results, pop responses and ack results, are
// encoded by hand: encoding/json re-validates and compacts every
// json.RawMessage payload, a full scan of each message that profiles showed
// as the largest cost of a pop, and its reflection was 6% of the CPU of
// popping and acking. Payloads come from storage, where only valid JSON is
// written, so they are copied verbatim. encode_test.go checks the output
// against encoding/json.

func writeRaw(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// pushResultsLen is about the length appendPushResults writes for rs (its
// names and punctuation, about 120 bytes a result, and the values, which
// escaping rarely lengthens), so that the answer to a push of 100 is
// written into one buffer instead of grown into one, copied each time.
func pushResultsLen(rs []api.PushResult) int {
	n := 2
	for _, r := range rs {
		n += 128 + len(r.TransactionID) + len(r.TransactionIDCamel) + len(r.Status) + len(r.MessageID) +
			len(r.PartitionID) + len(r.TraceID) + len(r.QueueName) + len(r.Error)
	}
	return n
}

func appendPushResults(b []byte, rs []api.PushResult) []byte {
	b = append(b, '[')
	for i, r := range rs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"index":`...)
		b = strconv.AppendInt(b, int64(r.Index), 10)
		b = appendField(b, "transaction_id", r.TransactionID, false)
		b = appendField(b, "transactionId", r.TransactionIDCamel, false)
		b = appendField(b, "status", r.Status, false)
		b = appendField(b, "message_id", r.MessageID, true)
		b = appendField(b, "partition_id", r.PartitionID, true)
		b = appendField(b, "trace_id", r.TraceID, true)
		b = appendField(b, "queueName", r.QueueName, false)
		b = appendField(b, "error", r.Error, true)
		b = append(b, '}')
	}
	return append(b, ']', '\n')
}

// appendAckResults writes rs byte for byte as json.NewEncoder(w).Encode(rs)
// does, newline included.
func appendAckResults(b []byte, rs []api.AckResult) []byte {
	if rs == nil {
		return append(b, "null\n"...)
	}
	b = append(b, '[')
	for i := range rs {
		r := &rs[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"index":`...)
		b = strconv.AppendInt(b, int64(r.Index), 10)
		b = appendField(b, "transactionId", r.TransactionID, false)
		b = append(b, `,"success":`...)
		b = strconv.AppendBool(b, r.Success)
		b = appendField(b, "error", r.Error, true)
		b = appendField(b, "queueName", r.QueueName, true)
		b = appendField(b, "partitionName", r.PartitionName, true)
		b = append(b, `,"leaseReleased":`...)
		b = strconv.AppendBool(b, r.LeaseReleased)
		b = append(b, `,"dlq":`...)
		b = strconv.AppendBool(b, r.DLQ)
		b = append(b, '}')
	}
	return append(b, ']', '\n')
}

func appendPopResponse(b []byte, p *api.PopResponse) []byte {
	b = append(b, `{"success":`...)
	b = strconv.AppendBool(b, p.Success)
	b = appendField(b, "queue", p.Queue, false)
	b = appendField(b, "partition", p.Partition, true)
	b = appendField(b, "partitionId", p.PartitionID, true)
	b = appendField(b, "leaseId", p.LeaseID, true)
	b = appendField(b, "consumerGroup", p.ConsumerGroup, false)
	b = append(b, `,"partitionsClaimed":`...)
	b = strconv.AppendInt(b, int64(p.PartitionsClaimed), 10)
	b = append(b, `,"messages":[`...)
	for i := range p.Messages {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendMessage(b, &p.Messages[i])
	}
	b = append(b, ']')
	if len(p.Gaps) > 0 {
		b = append(b, `,"gaps":[`...)
		for i := range p.Gaps {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendGap(b, &p.Gaps[i])
		}
		b = append(b, ']')
	}
	return append(b, '}', '\n')
}

func appendGap(b []byte, g *api.Gap) []byte {
	b = append(b, `{"queue":`...)
	b = appendString(b, g.Queue)
	b = appendField(b, "partition", g.Partition, false)
	b = appendField(b, "partitionId", g.PartitionID, false)
	for _, f := range []struct {
		name string
		v    int64
	}{{"fromOffset", g.FromOffset}, {"toOffset", g.ToOffset}, {"messages", g.Messages}} {
		b = append(append(append(b, `,"`...), f.name...), `":`...)
		b = strconv.AppendInt(b, f.v, 10)
	}
	b = append(b, `,"rules":[`...)
	for i, r := range g.Rules {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, r)
	}
	b = append(b, `],"deletedAt":`...)
	if g.DeletedAt == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '"')
		b = g.DeletedAt.AppendFormat(b, time.RFC3339Nano)
		b = append(b, '"')
	}
	b = appendField(b, "reason", g.Reason, false)
	return append(b, '}')
}

func appendMessage(b []byte, m *api.Message) []byte {
	b = append(b, `{"id":`...)
	b = appendString(b, m.ID)
	b = appendField(b, "transactionId", m.TransactionID, false)
	b = appendNullable(b, "traceId", m.TraceID)
	b = append(b, `,"data":`...)
	if len(m.Data) == 0 {
		b = append(b, "null"...)
	} else {
		b = append(b, m.Data...)
	}
	b = appendNullable(b, "producerSub", m.ProducerSub)
	b = appendField(b, "createdAt", m.CreatedAt, false)
	b = appendField(b, "queue", m.Queue, false)
	b = appendField(b, "partition", m.Partition, false)
	b = appendField(b, "partitionId", m.PartitionID, false)
	b = appendField(b, "leaseId", m.LeaseID, true)
	b = appendField(b, "consumerGroup", m.ConsumerGroup, true)
	b = append(b, `,"retryCount":`...)
	b = strconv.AppendInt(b, int64(m.RetryCount), 10)
	b = append(b, `,"offset":`...)
	b = strconv.AppendInt(b, m.Offset, 10)
	return append(b, '}')
}

// appendField appends ,"name":"value"; omitEmpty mirrors `json:",omitempty"`.
func appendField(b []byte, name, value string, omitEmpty bool) []byte {
	if omitEmpty && value == "" {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return appendString(b, value)
}

// appendNullable appends ,"name":"value", or ,"name":null when value is
// empty (api.NullString).
func appendNullable(b []byte, name string, value api.NullString) []byte {
	if value == "" {
		b = append(b, ',', '"')
		b = append(b, name...)
		return append(b, `":null`...)
	}
	return appendField(b, name, string(value), false)
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string the way encoding/json does
// (HTML-safe escapes, invalid UTF-8 as U+FFFD, U+2028/9 escaped).
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

package pushdec

// field is a member of a push or ack batch body that the decoder fills.
type field int

const (
	fieldUnknown field = iota
	fieldItems
	fieldQueue
	fieldPartition
	fieldPayload
	fieldTransactionID
	fieldTraceID
	fieldAcknowledgments
	fieldConsumerGroup
	fieldPartitionID
	fieldLeaseID
	fieldStatus
	fieldError
)

// fieldName is a JSON key (as in api's struct tags) and its folded form.
type fieldName struct {
	name   string // letters only, which the ASCII fast path relies on
	folded string
	field  field
}

func newFieldName(name string, f field) fieldName {
	return fieldName{name: name, folded: foldName(name), field: f}
}

var (
	requestFields = []fieldName{newFieldName("items", fieldItems)}
	itemFields    = []fieldName{
		newFieldName("queue", fieldQueue),
		newFieldName("partition", fieldPartition),
		newFieldName("payload", fieldPayload),
		newFieldName("transactionId", fieldTransactionID),
		newFieldName("traceId", fieldTraceID),
	}
	ackBatchFields = []fieldName{
		newFieldName("consumerGroup", fieldConsumerGroup),
		newFieldName("acknowledgments", fieldAcknowledgments),
	}
	ackFields = []fieldName{
		newFieldName("transactionId", fieldTransactionID),
		newFieldName("partitionId", fieldPartitionID),
		newFieldName("leaseId", fieldLeaseID),
		newFieldName("status", fieldStatus),
		newFieldName("consumerGroup", fieldConsumerGroup),
		newFieldName("error", fieldError),
	}
)

// itemField names the PushItem field a raw key (between the quotes, escapes
// unresolved) decodes into.
func itemField(key []byte, escaped bool) field {
	if !escaped {
		switch string(key) {
		case "queue":
			return fieldQueue
		case "payload":
			return fieldPayload
		case "partition":
			return fieldPartition
		case "transactionId":
			return fieldTransactionID
		case "traceId":
			return fieldTraceID
		}
	}
	return lookupField(key, escaped, itemFields)
}

// ackField names the AckRequest field a raw key decodes into.
func ackField(key []byte, escaped bool) field {
	if !escaped {
		switch string(key) {
		case "transactionId":
			return fieldTransactionID
		case "partitionId":
			return fieldPartitionID
		case "leaseId":
			return fieldLeaseID
		case "status":
			return fieldStatus
		case "consumerGroup":
			return fieldConsumerGroup
		case "error":
			return fieldError
		}
	}
	return lookupField(key, escaped, ackFields)
}

// lookupField matches a raw key against fields like encoding/json: an exact
// match first, else a case-insensitive one by encoding/json's folding.
// No two of our fields differ only in case, so the first match is the one.
func lookupField(key []byte, escaped bool, fields []fieldName) field {
	if !escaped && isASCII(key) {
		for _, f := range fields {
			if asciiEqualFold(key, f.name) {
				return f.field
			}
		}
		return fieldUnknown
	}
	folded := foldName(unquote(key))
	for _, f := range fields {
		if folded == f.folded {
			return f.field
		}
	}
	return fieldUnknown
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// asciiEqualFold compares ASCII key with name, which holds only letters, so
// or-ing in the lower-case bit cannot make a non-letter equal to a letter.
func asciiEqualFold(key []byte, name string) bool {
	if len(key) != len(name) {
		return false
	}
	for i, c := range key {
		if c|0x20 != name[i]|0x20 {
			return false
		}
	}
	return true
}

// Package api holds the request and response types of lethe's HTTP API, which
// is Queen MQ's API v1. The server, the Go client and the CLI share them so the
// three cannot drift apart.
package api

import (
	"encoding/json"
	"time"
)

// DefaultPartition is the partition a push lands in when it names none.
const DefaultPartition = "Default"

// QueueModeGroup is the consumer group used when a pop names none: every
// consumer of the queue then shares one cursor, like a classic work queue.
const QueueModeGroup = "__QUEUE_MODE__"

// Error is the body of every 4xx and 5xx answer.
type Error struct {
	Error string `json:"error"`
	// Field names the request field at fault, when one is ("items[3].queue").
	Field string `json:"field,omitempty"`
	// RequestID is also in the X-Request-Id header and in the server's log.
	RequestID string `json:"requestId,omitempty"`
}

// PushRequest is the body of POST /api/v1/push.
type PushRequest struct {
	Items []PushItem `json:"items"`
}

// PushItem is one message to append. Payload is kept as raw JSON (null too).
type PushItem struct {
	Queue         string          `json:"queue"`
	Partition     string          `json:"partition,omitempty"`
	Payload       json.RawMessage `json:"payload"`
	TransactionID string          `json:"transactionId,omitempty"`
	TraceID       string          `json:"traceId,omitempty"`
}

// Push statuses.
const (
	StatusQueued    = "queued"
	StatusDuplicate = "duplicate"
	StatusBuffered  = "buffered"
	StatusFailed    = "failed"
)

// PushResult answers one PushItem, in item order.
type PushResult struct {
	Index         int    `json:"index"`
	TransactionID string `json:"transaction_id"`
	// TransactionIDCamel repeats TransactionID for clients that read Queen's
	// camelCase spelling.
	TransactionIDCamel string `json:"transactionId"`
	Status             string `json:"status"`
	MessageID          string `json:"message_id,omitempty"`
	PartitionID        string `json:"partition_id,omitempty"`
	TraceID            string `json:"trace_id,omitempty"`
	QueueName          string `json:"queueName"`
	Error              string `json:"error,omitempty"`
}

// NullString is a string JSON spells null when it is empty: a delivered
// message without a trace id or producer carries "traceId": null and
// "producerSub": null, as Queen's messages do.
type NullString string

// MarshalJSON writes null for "".
func (s NullString) MarshalJSON() ([]byte, error) {
	if s == "" {
		return []byte("null"), nil
	}
	return json.Marshal(string(s))
}

// Message is one delivered message.
type Message struct {
	ID            string          `json:"id"`
	TransactionID string          `json:"transactionId"`
	TraceID       NullString      `json:"traceId"`
	Data          json.RawMessage `json:"data"`
	ProducerSub   NullString      `json:"producerSub"`
	CreatedAt     string          `json:"createdAt"`
	Queue         string          `json:"queue"`
	Partition     string          `json:"partition"`
	PartitionID   string          `json:"partitionId"`
	LeaseID       string          `json:"leaseId,omitempty"`
	ConsumerGroup string          `json:"consumerGroup,omitempty"`
	RetryCount    int             `json:"retryCount"`
	Offset        int64           `json:"offset"`
}

// PopResponse is the 200 answer of a pop; an empty pop answers 204.
type PopResponse struct {
	Success           bool      `json:"success"`
	Queue             string    `json:"queue"`
	Partition         string    `json:"partition,omitempty"`
	PartitionID       string    `json:"partitionId,omitempty"`
	LeaseID           string    `json:"leaseId,omitempty"`
	ConsumerGroup     string    `json:"consumerGroup"`
	PartitionsClaimed int       `json:"partitionsClaimed"`
	Messages          []Message `json:"messages"`
	// Gaps are runs of messages the group lost unread on the partitions
	// this pop claimed from (absent when there are none).
	Gaps []Gap `json:"gaps,omitempty"`
}

// Gap is a run of a partition's messages that retention deleted before the
// group consumed them. A pop reports it once: the group's position moves
// past it in the same transaction that claims the partition's next
// messages.
type Gap struct {
	Queue       string `json:"queue"`
	Partition   string `json:"partition"`
	PartitionID string `json:"partitionId"`
	// FromOffset and ToOffset bound the run; Messages counts those of it
	// the group had not completed (some may have been acked ahead).
	FromOffset int64 `json:"fromOffset"`
	ToOffset   int64 `json:"toOffset"`
	Messages   int64 `json:"messages"`
	// Rules are the retention history's rules that deleted them
	// (retention, max_wait, tier_drop, ...), in the order they last did;
	// DeletedAt is when the last of them did. Empty and null when the
	// history no longer says (see Reason).
	Rules     []string   `json:"rules"`
	DeletedAt *time.Time `json:"deletedAt"`
	// Reason says it in a sentence.
	Reason string `json:"reason"`
}

// Ack statuses. "success" is Queen's alias of "completed".
const (
	AckCompleted = "completed"
	AckSuccess   = "success"
	AckFailed    = "failed"
	AckRetry     = "retry"
	AckDLQ       = "dlq"
)

// AckRequest is the body of POST /api/v1/ack and one element of a batch.
type AckRequest struct {
	TransactionID string `json:"transactionId"`
	PartitionID   string `json:"partitionId"`
	LeaseID       string `json:"leaseId,omitempty"`
	Status        string `json:"status"`
	ConsumerGroup string `json:"consumerGroup,omitempty"`
	Error         string `json:"error,omitempty"`
}

// AckBatchRequest is the body of POST /api/v1/ack/batch.
type AckBatchRequest struct {
	ConsumerGroup   string       `json:"consumerGroup,omitempty"`
	Acknowledgments []AckRequest `json:"acknowledgments"`
}

// AckResult answers one acknowledgement.
type AckResult struct {
	Index         int    `json:"index"`
	TransactionID string `json:"transactionId"`
	Success       bool   `json:"success"`
	Error         string `json:"error,omitempty"`
	QueueName     string `json:"queueName,omitempty"`
	PartitionName string `json:"partitionName,omitempty"`
	LeaseReleased bool   `json:"leaseReleased"`
	DLQ           bool   `json:"dlq"`
}

// TransactionRequest is the body of POST /api/v1/transaction.
type TransactionRequest struct {
	Operations     []Operation `json:"operations"`
	RequiredLeases []string    `json:"requiredLeases,omitempty"`
}

// Operation is one step of a transaction: an ack or a push.
type Operation struct {
	Type          string     `json:"type"`
	TransactionID string     `json:"transactionId,omitempty"`
	PartitionID   string     `json:"partitionId,omitempty"`
	LeaseID       string     `json:"leaseId,omitempty"`
	Status        string     `json:"status,omitempty"`
	ConsumerGroup string     `json:"consumerGroup,omitempty"`
	Error         string     `json:"error,omitempty"`
	Items         []PushItem `json:"items,omitempty"`
}

// TransactionResponse answers a transaction: all of it happened, or none.
type TransactionResponse struct {
	TransactionID string            `json:"transactionId"`
	Success       bool              `json:"success"`
	Error         string            `json:"error,omitempty"`
	Results       []json.RawMessage `json:"results"`
}

// ExtendLeaseRequest is the body of POST /api/v1/lease/:id/extend.
type ExtendLeaseRequest struct {
	Seconds int `json:"seconds"`
}

// ExtendLeaseResponse answers a lease extension.
type ExtendLeaseResponse struct {
	Success      bool   `json:"success"`
	LeaseID      string `json:"leaseId"`
	NewExpiresAt string `json:"newExpiresAt,omitempty"`
	Error        string `json:"error,omitempty"`
}

// ConfigureRequest is the body of POST /api/v1/configure.
type ConfigureRequest struct {
	Queue     string          `json:"queue"`
	Namespace string          `json:"namespace,omitempty"`
	Task      string          `json:"task,omitempty"`
	Options   json.RawMessage `json:"options,omitempty"`
}

// ConfigureResponse answers a configure call.
type ConfigureResponse struct {
	Configured bool         `json:"configured"`
	Queue      string       `json:"queue"`
	Namespace  string       `json:"namespace,omitempty"`
	Task       string       `json:"task,omitempty"`
	Options    QueueOptions `json:"options"`
	// RetentionChange is the tier change this call started, queued or
	// left awaiting confirmation; absent when the tier did not change or
	// changed with nothing to move.
	RetentionChange *RetentionChange `json:"retentionChange,omitempty"`
}

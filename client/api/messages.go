package api

import (
	"encoding/json"
	"time"
)

// Message states in the browser, per consumer group.
const (
	MessagePending    = "pending"
	MessageProcessing = "processing"
	MessageCompleted  = "completed"
	MessageDead       = "dead"
	// MessageExpired is waiting but older than the queue's ttl: it will be
	// passed, never delivered.
	MessageExpired = "expired"
)

// BrowsedMessage is one message of GET /api/v1/messages. The payload is
// left out; GET /api/v1/messages/{partitionId}/{transactionId} has it.
type BrowsedMessage struct {
	ID            string `json:"id"`
	TransactionID string `json:"transactionId"`
	TraceID       string `json:"traceId,omitempty"`
	PartitionID   string `json:"partitionId"`
	QueuePath     string `json:"queuePath"`
	Queue         string `json:"queue"`
	Partition     string `json:"partition"`
	Namespace     string `json:"namespace,omitempty"`
	Task          string `json:"task,omitempty"`
	Offset        int64  `json:"offset"`
	// Status is the first of dead, processing, pending, expired that any
	// consumer group reports, else completed; ConsumerGroups has each group's.
	Status         string            `json:"status"`
	ConsumerGroups map[string]string `json:"consumerGroups"`
	CreatedAt      time.Time         `json:"createdAt"`
	PayloadBytes   int               `json:"payloadBytes"`
}

// MessagePage is one page of a browse, newest first.
type MessagePage struct {
	Messages []BrowsedMessage `json:"messages"`
	Limit    int              `json:"limit"`
	Offset   int              `json:"offset"`
	// Truncated says the scan stopped at its budget before filling the
	// page: narrow the filters (queue, partition, from, to).
	Truncated bool `json:"truncated"`
	// Unreadable counts stored messages the scan passed but could not
	// decode (a damaged segment); they are logged on the server.
	Unreadable int `json:"unreadable,omitempty"`
}

// MessageDetail is one message with its payload.
type MessageDetail struct {
	BrowsedMessage
	ProducerSub  string          `json:"producerSub,omitempty"`
	Payload      json.RawMessage `json:"payload"`
	ErrorMessage string          `json:"errorMessage,omitempty"`
	RetryCount   int             `json:"retryCount,omitempty"`
}

package api

import (
	"encoding/json"
	"time"
)

// DeadLetter is a message a consumer group gave up on.
type DeadLetter struct {
	// ID is a positive whole number, as a string; it names the dead letter
	// in /api/v1/dlq/{id}.
	ID            string          `json:"id"`
	MessageID     string          `json:"messageId"`
	TransactionID string          `json:"transactionId"`
	TraceID       string          `json:"traceId,omitempty"`
	PartitionID   string          `json:"partitionId"`
	Partition     string          `json:"partition"`
	Queue         string          `json:"queue"`
	ConsumerGroup string          `json:"consumerGroup"`
	Offset        int64           `json:"offset"`
	Data          json.RawMessage `json:"data"`
	// DataError says why data is null although the message had a payload:
	// it is sealed under a key this server does not hold.
	DataError    string    `json:"dataError,omitempty"`
	ErrorMessage string    `json:"errorMessage"`
	RetryCount   int       `json:"retryCount"`
	CreatedAt    time.Time `json:"createdAt"`
	FailedAt     time.Time `json:"failedAt"`
}

// DeadLetterList is a page of GET /api/v1/dlq, the most recently failed
// first; Total counts every dead letter the filter matches.
type DeadLetterList struct {
	Messages []DeadLetter `json:"messages"`
	Total    int64        `json:"total"`
	Limit    int          `json:"limit"`
	Offset   int          `json:"offset"`
	// Truncated says the page stopped before limit because its payloads
	// reached the server's bound for one page (64 MiB): ask for the next
	// page from offset + len(messages).
	Truncated bool `json:"truncated"`
}

// DeadLetterReplayed answers POST /api/v1/dlq/{id}/replay: the payload was
// appended to its partition again under a new transaction id, and the dead
// letter is gone.
type DeadLetterReplayed struct {
	Success       bool   `json:"success"`
	ID            string `json:"id"`
	Queue         string `json:"queue"`
	Partition     string `json:"partition"`
	PartitionID   string `json:"partitionId"`
	TransactionID string `json:"transactionId"`
	MessageID     string `json:"messageId"`
	Offset        int64  `json:"offset"`
}

// DeadLetterDeleted answers DELETE /api/v1/dlq/{id}.
type DeadLetterDeleted struct {
	Success bool   `json:"success"`
	ID      string `json:"id"`
}

package api

import "encoding/json"

// TraceRequest is the body of POST /api/v1/traces: an event a consumer
// records against a message.
type TraceRequest struct {
	TransactionID string          `json:"transactionId"`
	PartitionID   string          `json:"partitionId"`
	ConsumerGroup string          `json:"consumerGroup,omitempty"`
	EventType     string          `json:"eventType,omitempty"`
	Data          json.RawMessage `json:"data"`
	// TraceNames is null, one name, or an array of names.
	TraceNames json.RawMessage `json:"traceNames,omitempty"`
}

// TraceRecorded answers a recorded trace (201).
type TraceRecorded struct {
	Success bool   `json:"success"`
	TraceID string `json:"traceId"`
}

// Trace is one recorded event. The by-name listing adds the message's
// queue, partition and payload.
type Trace struct {
	ID             string          `json:"id"`
	TransactionID  string          `json:"transaction_id,omitempty"`
	PartitionID    string          `json:"partition_id,omitempty"`
	EventType      string          `json:"event_type"`
	Data           json.RawMessage `json:"data"`
	ConsumerGroup  string          `json:"consumer_group"`
	WorkerID       *string         `json:"worker_id"`
	CreatedAt      string          `json:"created_at"`
	TraceNames     []string        `json:"trace_names"`
	QueueName      *string         `json:"queue_name,omitempty"`
	PartitionName  *string         `json:"partition_name,omitempty"`
	MessagePayload json.RawMessage `json:"message_payload,omitempty"`
}

// MessageTraces answers GET /api/v1/traces/:partitionId/:transactionId,
// oldest first.
type MessageTraces struct {
	Traces []Trace `json:"traces"`
}

// TracesByName answers GET /api/v1/traces/by-name/:traceName.
type TracesByName struct {
	Traces     []Trace    `json:"traces"`
	Total      int64      `json:"total"`
	Pagination Pagination `json:"pagination"`
	// PayloadsTruncated says the page's message payloads reached the
	// server's bound for one page (64 MiB): the traces after the last
	// one with a payload show null whether or not the message is still
	// stored; ask for a page from there.
	PayloadsTruncated bool `json:"payloadsTruncated,omitempty"`
}

// TraceNames answers GET /api/v1/traces/names, most recently seen first.
type TraceNames struct {
	TraceNames []TraceNameStat `json:"trace_names"`
	Total      int64           `json:"total"`
	Pagination Pagination      `json:"pagination"`
}

// TraceNameStat is one trace name and how it was used.
type TraceNameStat struct {
	TraceName    string `json:"trace_name"`
	TraceCount   int64  `json:"trace_count"`
	MessageCount int64  `json:"message_count"`
	LastSeen     string `json:"last_seen"`
}

// Pagination echoes a listing's limit and offset.
type Pagination struct {
	Limit  int `json:"limit"`
	Offset int `json:"offset"`
}

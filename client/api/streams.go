package api

import "encoding/json"

// The streams API (Queen's /streams/v1): a streaming query's registration,
// its cycles and its state. Field names are Queen's (snake_case).

// StreamQueryRequest is the body of POST /streams/v1/queries.
type StreamQueryRequest struct {
	Name        string `json:"name"`
	SourceQueue string `json:"source_queue"`
	SinkQueue   string `json:"sink_queue,omitempty"`
	ConfigHash  string `json:"config_hash"`
	// Reset consents to dropping the state of a registration whose
	// config_hash differs; with the same hash it changes nothing.
	Reset bool `json:"reset,omitempty"`
}

// StreamQueryResponse answers a registration.
type StreamQueryResponse struct {
	Success    bool   `json:"success"`
	QueryID    string `json:"query_id"`
	Name       string `json:"name"`
	ConfigHash string `json:"config_hash"`
	// Fresh says no live registration of the name existed.
	Fresh bool `json:"fresh"`
	// Reset says an earlier registration's state was dropped (it is
	// retired and purged by the retention loop).
	Reset bool `json:"reset"`
}

// StreamQueryRemoved answers DELETE /streams/v1/queries/:name.
type StreamQueryRemoved struct {
	Success bool   `json:"success"`
	QueryID string `json:"query_id"`
	Name    string `json:"name"`
	// StateKeys is how many state rows the retention loop will purge.
	StateKeys int64 `json:"state_keys"`
}

// StreamCycleRequest is the body of POST /streams/v1/cycle: state writes,
// sink pushes and the source ack, committed together or not at all.
type StreamCycleRequest struct {
	QueryID       string          `json:"query_id"`
	PartitionID   string          `json:"partition_id"`
	ConsumerGroup string          `json:"consumer_group,omitempty"`
	StateOps      []StreamStateOp `json:"state_ops"`
	PushItems     []PushItem      `json:"push_items"`
	Ack           *StreamAck      `json:"ack"`
	// ReleaseLease (default true) ends the source lease with the ack;
	// false keeps the rest of the lease (a gate's partial ack).
	ReleaseLease *bool `json:"release_lease,omitempty"`
}

// StreamStateOp is one state write: "upsert" a key's value or "delete" it.
type StreamStateOp struct {
	Type  string          `json:"type"`
	Key   string          `json:"key"`
	Value json.RawMessage `json:"value,omitempty"`
}

// StreamAck acknowledges the source messages of a cycle up to and
// including the one named.
type StreamAck struct {
	TransactionID string `json:"transactionId"`
	LeaseID       string `json:"leaseId,omitempty"`
	// Status is completed (or success), or failed (or dlq): the named
	// message goes to the dead letters.
	Status string `json:"status,omitempty"`
	Count  *int   `json:"count,omitempty"`
	Error  string `json:"error,omitempty"`
}

// StreamCycleResponse answers a cycle. Success false (with Error) means the
// cycle rolled back and wrote nothing.
type StreamCycleResponse struct {
	Success         bool             `json:"success"`
	QueryID         string           `json:"query_id"`
	PartitionID     string           `json:"partition_id"`
	QueueName       *string          `json:"queueName"`
	StateOpsApplied int              `json:"state_ops_applied"`
	PushResults     []PushResult     `json:"push_results"`
	AckResult       *StreamAckResult `json:"ack_result"`
	Error           string           `json:"error,omitempty"`
}

// StreamAckResult is what a cycle's ack did.
type StreamAckResult struct {
	Success       bool `json:"success"`
	Count         int  `json:"count"`
	LeaseReleased bool `json:"lease_released"`
	DLQ           bool `json:"dlq"`
}

// StreamStateRequest is the body of POST /streams/v1/state/get. The
// filters are ANDed; none returns every key of the partition.
type StreamStateRequest struct {
	QueryID     string   `json:"query_id"`
	PartitionID string   `json:"partition_id"`
	Keys        []string `json:"keys"`
	KeyPrefix   string   `json:"key_prefix,omitempty"`
	// RipeAtOrBefore keeps only values whose numeric windowEnd is at or
	// before it (epoch ms): a JSON number, or null for none.
	RipeAtOrBefore json.RawMessage `json:"ripe_at_or_before,omitempty"`
}

// StreamStateResponse answers a state read, rows in key order.
type StreamStateResponse struct {
	Success bool             `json:"success"`
	Rows    []StreamStateRow `json:"rows"`
}

// StreamStateRow is one state key.
type StreamStateRow struct {
	Key       string          `json:"key"`
	Value     json.RawMessage `json:"value"`
	UpdatedAt string          `json:"updated_at"`
}

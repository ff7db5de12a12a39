package api

import "time"

// MessageCounts count stored messages. Total is what retention has not
// removed yet (next offset minus low watermark, summed over partitions).
type MessageCounts struct {
	Total      int64 `json:"total"`
	DeadLetter int64 `json:"deadLetter"`
}

// Overview is the server-wide picture: GET /api/v1/resources/overview.
type Overview struct {
	Queues         int64         `json:"queues"`
	Partitions     int64         `json:"partitions"`
	Namespaces     int64         `json:"namespaces"`
	Tasks          int64         `json:"tasks"`
	ConsumerGroups int64         `json:"consumerGroups"`
	ActiveLeases   int64         `json:"activeLeases"`
	Messages       MessageCounts `json:"messages"`
	DeadLetters    int64         `json:"deadLetters"`
	// Bytes is the on-disk size of the segment table with its TOAST and
	// index: compressed.
	Bytes int64 `json:"bytes"`
}

// Status is GET /api/v1/status: the server's version and uptime with the
// overview's counts inline.
type Status struct {
	Version       string    `json:"version"`
	StartedAt     time.Time `json:"startedAt"`
	UptimeSeconds int64     `json:"uptimeSeconds"`
	Time          time.Time `json:"time"`
	Overview
}

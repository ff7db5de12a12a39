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

// TagSummary is one namespace or task with what it groups: an entry of GET
// /api/v1/resources/namespaces and /api/v1/resources/tasks.
type TagSummary struct {
	Namespace  string        `json:"namespace,omitempty"`
	Task       string        `json:"task,omitempty"`
	Queues     int64         `json:"queues"`
	Partitions int64         `json:"partitions"`
	Messages   MessageCounts `json:"messages"`
}

// QueueGroupLag is one consumer group's lag on a queue.
type QueueGroupLag struct {
	Name              string `json:"name"`
	Members           int    `json:"members"`
	TotalLag          int64  `json:"totalLag"`
	MaxTimeLag        int64  `json:"maxTimeLag"`
	PartitionsWithLag int    `json:"partitionsWithLag"`
	LeasesHeld        int    `json:"leasesHeld"`
	State             string `json:"state"`
	TimeToLoss
}

// QueueStatus is one queue of GET /api/v1/status/queues. Bytes is the
// frame bytes of its segments as written (before compression).
type QueueStatus struct {
	Name           string          `json:"name"`
	Namespace      string          `json:"namespace"`
	Task           string          `json:"task"`
	CreatedAt      time.Time       `json:"createdAt"`
	Partitions     int64           `json:"partitions"`
	Messages       MessageCounts   `json:"messages"`
	Bytes          int64           `json:"bytes"`
	ConsumerGroups []QueueGroupLag `json:"consumerGroups"`
}

// PartitionStatus is one partition of a queue's status, with every
// group's position on it.
type PartitionStatus struct {
	ID             string           `json:"id"`
	Name           string           `json:"name"`
	CreatedAt      time.Time        `json:"createdAt"`
	LastPushAt     *time.Time       `json:"lastPushAt"`
	NextOffset     int64            `json:"nextOffset"`
	LowWatermark   int64            `json:"lowWatermark"`
	Messages       MessageCounts    `json:"messages"`
	Bytes          int64            `json:"bytes"`
	Segments       int64            `json:"segments"`
	ConsumerGroups []GroupPartition `json:"consumerGroups"`
}

// QueueDetail is GET /api/v1/status/queues/{queue}: one queue's status with
// its configuration and, on request, a page of its partitions.
type QueueDetail struct {
	Queue          QueueDetailQueue   `json:"queue"`
	Totals         QueueDetailTotals  `json:"totals"`
	ConsumerGroups []QueueGroupLag    `json:"consumerGroups"`
	Partitions     []*PartitionStatus `json:"partitions,omitempty"`
}

// QueueDetailQueue names a queue and carries its options.
type QueueDetailQueue struct {
	Name      string    `json:"name"`
	Namespace string    `json:"namespace"`
	Task      string    `json:"task"`
	CreatedAt time.Time `json:"createdAt"`
	Config    any       `json:"config"`
}

// QueueDetailTotals are a queue's counts (Total and DeadLetter repeat
// Messages' for Queen's clients).
type QueueDetailTotals struct {
	Messages   MessageCounts `json:"messages"`
	Total      int64         `json:"total"`
	DeadLetter int64         `json:"deadLetter"`
	Partitions int64         `json:"partitions"`
	Bytes      int64         `json:"bytes"`
}

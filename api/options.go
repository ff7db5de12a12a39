package api

import "time"

// QueueOptions are a queue's settings. Names and defaults are Queen's, so its
// clients and its documentation stay true; lethe adds DedupWindowSeconds.
type QueueOptions struct {
	LeaseTime                 int  `json:"leaseTime"`
	RetryLimit                int  `json:"retryLimit"`
	RetryDelay                int  `json:"retryDelay"`
	MaxSize                   int  `json:"maxSize"`
	TTL                       int  `json:"ttl"`
	DeadLetterQueue           bool `json:"deadLetterQueue"`
	DLQAfterMaxRetries        bool `json:"dlqAfterMaxRetries"`
	Priority                  int  `json:"priority"`
	DelayedProcessing         int  `json:"delayedProcessing"`
	WindowBuffer              int  `json:"windowBuffer"`
	RetentionEnabled          bool `json:"retentionEnabled"`
	RetentionSeconds          int  `json:"retentionSeconds"`
	CompletedRetentionSeconds int  `json:"completedRetentionSeconds"`
	EncryptionEnabled         bool `json:"encryptionEnabled"`
	MaxWaitTimeSeconds        int  `json:"maxWaitTimeSeconds"`
	DedupWindowSeconds        int  `json:"dedupWindowSeconds"`
}

// DefaultQueueOptions returns Queen's defaults.
func DefaultQueueOptions() QueueOptions {
	return QueueOptions{
		LeaseTime:  300,
		RetryLimit: 3,
		RetryDelay: 1000,
		TTL:        3600,
	}
}

// Queue is a queue as GET /api/v1/resources/queues answers it.
type Queue struct {
	Name       string       `json:"name"`
	Namespace  string       `json:"namespace,omitempty"`
	Task       string       `json:"task,omitempty"`
	Options    QueueOptions `json:"options"`
	Partitions int          `json:"partitions"`
	Messages   int64        `json:"messages"`
	CreatedAt  time.Time    `json:"createdAt"`
	UpdatedAt  time.Time    `json:"updatedAt"`
}

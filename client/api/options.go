package api

import "time"

// QueueOptions are a queue's settings. Names are Queen's, so its clients
// work; lethe adds DedupWindowSeconds. Every option does what docs/api.md
// says; where Queen's default promised something Queen never did (ttl
// 3600, the dead-letter switches off), the default is what lethe does.
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
	// RetentionTier is lethe's tier of time partitions dropped whole: 1w,
	// 3w, 7w (or 7d, 21d, 49d) or forever; empty takes the server's
	// LETHE_DEFAULT_RETENTION_TIER for a new queue and keeps the current
	// tier otherwise. A shorter tier on a queue holding data waits for
	// confirmation (ConfigureResponse.RetentionChange).
	RetentionTier string `json:"retentionTier,omitempty"`
	// Quarantined says what a tier drop does with the queue's dead
	// letters: keep (until replayed or deleted) or purge (with the
	// partition their message was in).
	Quarantined string `json:"quarantined,omitempty"`
	// RequiredGroups are consumer groups owed the queue's data before
	// they ever connect: completed retention and the tiers count them as
	// wanting everything until they read it.
	RequiredGroups []string `json:"requiredGroups,omitempty"`
}

// DefaultQueueOptions returns the defaults: Queen's, except ttl 0 (no
// expiry; Queen's 3600 expired nothing) and deadLetterQueue and
// dlqAfterMaxRetries true (a message that failed past retryLimit always
// goes to the dead letters, in Queen too).
func DefaultQueueOptions() QueueOptions {
	return QueueOptions{
		LeaseTime:          300,
		RetryLimit:         3,
		RetryDelay:         1000,
		DeadLetterQueue:    true,
		DLQAfterMaxRetries: true,
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

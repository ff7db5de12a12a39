package api

import "time"

// RetentionChange is a queue's tier change (docs/retention.md, "Changing
// a tier").
type RetentionChange struct {
	Queue string `json:"queue"`
	From  string `json:"from"`
	To    string `json:"to"`
	// State is awaiting_confirm (a shortening: not applied until an
	// operator confirms), running, queued (a value set while a change
	// runs: it waits) or done.
	State string `json:"state"`
	// Delete, Move and Hold are what the change announced: finished
	// messages past the new window it deletes, messages it moves into the
	// new tier, and pending ones past the window it moves to the held
	// area.
	Delete Amount `json:"delete"`
	Move   Amount `json:"move"`
	Hold   Amount `json:"hold"`
	// Deleted, Moved and Held count what it did so far; Left is what is
	// still outside the new tier (messages).
	Deleted int64 `json:"deleted"`
	Moved   int64 `json:"moved"`
	Held    int64 `json:"held"`
	Left    int64 `json:"left"`
	// Next is a value set while this change runs; it waits.
	Next        string     `json:"next,omitempty"`
	RequestedAt time.Time  `json:"requestedAt"`
	ConfirmedAt *time.Time `json:"confirmedAt,omitempty"`
	FinishedAt  *time.Time `json:"finishedAt,omitempty"`
}

// Amount is messages and their bytes (as written, before compression).
type Amount struct {
	Messages int64 `json:"messages"`
	Bytes    int64 `json:"bytes"`
}

// RetentionView is GET /api/v1/retention/tiers: the time partitions, the
// held area and the tier changes.
type RetentionView struct {
	At         time.Time         `json:"at"`
	Partitions []TierPartition   `json:"partitions"`
	Held       []HeldMonth       `json:"held"`
	Changes    []RetentionChange `json:"changes"`
}

// TierPartition is one leaf of the segment log (or of the hash sidecar,
// tier "txns").
type TierPartition struct {
	Name string    `json:"name"`
	Tier string    `json:"tier"`
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	// Rows is the planner's estimate of segment rows (sidecar rows for
	// txns); Bytes the leaf's size on disk.
	Rows  int64 `json:"rows"`
	Bytes int64 `json:"bytes"`
	// DropsAt is when the tier check may drop it (its end plus its
	// tier's window); absent for forever, held and a leaf being dropped.
	DropsAt *time.Time `json:"dropsAt,omitempty"`
	State   string     `json:"state"`
}

// HeldMonth is one queue's share of one month of the held area.
type HeldMonth struct {
	Month    string `json:"month"`
	Queue    string `json:"queue"`
	Messages int64  `json:"messages"`
	Bytes    int64  `json:"bytes"`
	// Pending is, per consumer group, how many held messages it has not
	// consumed.
	Pending map[string]int64 `json:"pending"`
	// Quarantined counts the queue's dead letters of messages in this
	// month.
	Quarantined int64 `json:"quarantined"`
}

// RetentionExplain is GET /api/v1/retention/explain/{queue}: the bounds
// of a message's life in the queue as configured.
type RetentionExplain struct {
	Queue       string           `json:"queue"`
	Tier        string           `json:"tier"`
	Quarantined string           `json:"quarantined"`
	Required    []string         `json:"requiredGroups"`
	Bounds      []RetentionBound `json:"bounds"`
	// Change is the queue's tier change awaiting confirmation or running.
	Change *RetentionChange `json:"change,omitempty"`
}

// RetentionBound is one rule that deletes the queue's messages: what it
// deletes and when, at the earliest and the latest. Seconds rules and the
// tier all apply; whichever deletes first wins.
type RetentionBound struct {
	Rule       string `json:"rule"`
	Deletes    string `json:"deletes"`
	MinSeconds int64  `json:"minSeconds"`
	MaxSeconds int64  `json:"maxSeconds"`
	Text       string `json:"text"`
}

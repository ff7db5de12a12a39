package api

import "time"

// RetentionRun is what POST /api/v1/test/retention/run answers: what one
// whole retention cycle, the tier check included, did.
type RetentionRun struct {
	StartedAt        time.Time       `json:"startedAt"`
	Deleted          RetentionAmount `json:"deleted"`
	TierDropped      RetentionAmount `json:"tierDropped"`
	HeldDropped      RetentionAmount `json:"heldDropped"`
	TierChange       RetentionAmount `json:"tierChangeDeleted"`
	HeldMoved        RetentionAmount `json:"heldMoved"`
	TierMoved        RetentionAmount `json:"tierMoved"`
	LeavesDropped    int             `json:"leavesDropped"`
	QuarantinePurged int64           `json:"quarantinePurged"`
	ChangesFinished  int             `json:"changesFinished"`
	// Reclaimed counts the rows each reclaim rule deleted (streams' state,
	// traces).
	Reclaimed map[string]int64 `json:"reclaimed"`
	Failures  []string         `json:"failures"`
	// LeafDrops says what each dropped leaf held and what its parts cost.
	LeafDrops []RetentionLeafDrop `json:"leafDrops"`
	// SettleWorkMs is the time the settle steps (moves into a tier and to
	// the held area) worked, the duty cycle's rests excluded.
	SettleWorkMs float64 `json:"settleWorkMs"`
}

// RetentionLeafDrop is one leaf a run dropped: the bytes its files held
// before DROP TABLE, the work time of each part in milliseconds (rests
// excluded), and the wall-clock span from the first part's start to the end
// of DROP TABLE (rests included).
type RetentionLeafDrop struct {
	Leaf      string    `json:"leaf"`
	Tier      string    `json:"tier"`
	Bytes     int64     `json:"bytes"`
	DetachMs  float64   `json:"detachMs"`
	AuditMs   float64   `json:"auditMs"`
	DropMs    float64   `json:"dropMs"`
	StartedAt time.Time `json:"startedAt"`
	EndedAt   time.Time `json:"endedAt"`
}

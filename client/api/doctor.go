package api

import "time"

// Doctor statuses, from best to worst.
const (
	DoctorOK   = "ok"
	DoctorWarn = "warn"
	DoctorFail = "fail"
)

// DoctorReport is what GET /api/v1/doctor answers: the deployment checked
// against the checkpoints of trustworthy retention, one check each.
type DoctorReport struct {
	At time.Time `json:"at"`
	// Status is the worst of the checks' statuses.
	Status string        `json:"status"`
	Checks []DoctorCheck `json:"checks"`
}

// DoctorCheck is one checkpoint on the live deployment.
type DoctorCheck struct {
	ID string `json:"id"`
	// Checkpoint is what is checked, in words.
	Checkpoint string `json:"checkpoint"`
	Status     string `json:"status"`
	// Detail says what was found; Fix, when not ok, what to do about it.
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

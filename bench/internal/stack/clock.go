package stack

import "time"

// ScaledClock runs Scale times faster than the wall clock from the moment
// it was made: lethe run in-process with it sees its retention windows
// pass Scale times sooner, so a short test covers windows that would take
// a long one (the sidecar's 900-second floor, for instance).
type ScaledClock struct {
	origin time.Time
	scale  float64
}

// NewScaledClock starts a clock at the current time, running scale times
// faster.
func NewScaledClock(scale float64) *ScaledClock {
	return &ScaledClock{origin: time.Now(), scale: scale}
}

// Now is the origin plus the wall time since, times the scale.
func (c *ScaledClock) Now() time.Time {
	return c.origin.Add(time.Duration(float64(time.Since(c.origin)) * c.scale)).UTC()
}

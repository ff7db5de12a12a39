package cli

import (
	"fmt"
	"strings"
	"time"
)

// parseWhen reads a time flag: an RFC 3339 time, a date (midnight UTC),
// "now", or a duration meaning that long before now ("10m", "24h").
func parseWhen(flag, v string, now time.Time) (time.Time, error) {
	v = strings.TrimSpace(v)
	if v == "now" {
		return now, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(v); err == nil && d > 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("%s must be an RFC 3339 time (2026-01-31T10:00:00Z), a date (2026-01-31), now, or how long ago (10m, 24h); got %q",
		flag, v)
}

// stamp formats a time for tables: UTC, to the millisecond.
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

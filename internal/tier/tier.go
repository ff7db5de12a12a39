// Package tier names lethe's retention tiers and their rules as
// plain Go, with no database: parsing the option, the window each tier
// keeps, the span of its time partitions, which of two is shorter, and the
// bounds of a message's life. The SQL side (migration 050) implements the
// same numbers; tests compare them.
package tier

import (
	"fmt"
	"strings"
	"time"
)

// Tier is a queue's retention tier, canonical spelling.
type Tier string

// The tiers. Forever is never dropped by a tier (the retention rules still
// apply); Held is not a queue's tier but where pending frames of dropped
// partitions go.
const (
	OneWeek    Tier = "1w"
	ThreeWeeks Tier = "3w"
	SevenWeeks Tier = "7w"
	Forever    Tier = "forever"
	Held       Tier = "held"
)

// Day is 24 hours: leaves are UTC days, weeks and months.
const Day = 24 * time.Hour

// Allowed is the list of accepted spellings, for error messages.
const Allowed = "1w, 3w, 7w (or 7d, 21d, 49d) or forever"

// Queue tiers in order of the window they keep, shortest first.
var Queue = []Tier{OneWeek, ThreeWeeks, SevenWeeks, Forever}

// Outside are the queue tiers other than t, where a queue of tier t may
// still have segments to settle while its tier change runs (not the held
// area).
func Outside(t string) []string {
	var out []string
	for _, q := range Queue {
		if string(q) != t {
			out = append(out, string(q))
		}
	}
	return out
}

// Parse reads a retentionTier value: 1w, 3w, 7w, their day spellings 7d,
// 21d, 49d, or forever (case-insensitive). Anything else is an error that
// names the allowed values.
func Parse(s string) (Tier, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1w", "7d":
		return OneWeek, nil
	case "3w", "21d":
		return ThreeWeeks, nil
	case "7w", "49d":
		return SevenWeeks, nil
	case "forever":
		return Forever, nil
	}
	return "", fmt.Errorf("retentionTier must be one of %s, got %q", Allowed, s)
}

// Window is how long the tier keeps a partition after its range ends; ok
// is false for Forever.
func (t Tier) Window() (d time.Duration, ok bool) {
	switch t {
	case OneWeek:
		return 7 * Day, true
	case ThreeWeeks:
		return 21 * Day, true
	case SevenWeeks:
		return 49 * Day, true
	}
	return 0, false
}

// Span is the length of one of the tier's time partitions: a day for 1w,
// a week for 3w and 7w; Forever and Held have month partitions (0 here:
// months are not a fixed length).
func (t Tier) Span() time.Duration {
	switch t {
	case OneWeek:
		return Day
	case ThreeWeeks, SevenWeeks:
		return 7 * Day
	}
	return 0
}

// Shorter reports whether t keeps data for less time than u.
func (t Tier) Shorter(u Tier) bool { return rank(t) < rank(u) }

func rank(t Tier) int {
	for i, q := range Queue {
		if q == t {
			return i
		}
	}
	return len(Queue)
}

// Bounds is how long a message of the tier lives: at least Min after its
// append, at most Max (the window, plus the partition's span it may have
// been appended at the start of, plus one check interval before the drop
// runs). Forever is true for the forever tier, which states no bound.
type Bounds struct {
	Min, Max time.Duration
	Forever  bool
}

// LifeBounds states t's bounds with the tier check running every check.
func (t Tier) LifeBounds(check time.Duration) Bounds {
	w, ok := t.Window()
	if !ok {
		return Bounds{Forever: true}
	}
	return Bounds{Min: w, Max: w + t.Span() + check}
}

// LeafStart is the start of the partition of tier t holding at (UTC days,
// weeks from Monday, months).
func LeafStart(t Tier, at time.Time) time.Time {
	at = at.UTC()
	day := time.Date(at.Year(), at.Month(), at.Day(), 0, 0, 0, 0, time.UTC)
	switch t {
	case OneWeek:
		return day
	case ThreeWeeks, SevenWeeks:
		back := (int(day.Weekday()) + 6) % 7
		return day.AddDate(0, 0, -back)
	}
	return time.Date(at.Year(), at.Month(), 1, 0, 0, 0, 0, time.UTC)
}

// LeafEnd is the end of the partition of tier t holding at.
func LeafEnd(t Tier, at time.Time) time.Time {
	s := LeafStart(t, at)
	if span := t.Span(); span > 0 {
		return s.Add(span)
	}
	return s.AddDate(0, 1, 0)
}

// Quarantined says what a tier drop does with a queue's dead letters.
type Quarantined string

// Keep holds dead letters until someone replays or deletes them; Purge
// lets them go with the partition their message was in.
const (
	Keep  Quarantined = "keep"
	Purge Quarantined = "purge"
)

// ParseQuarantined reads the quarantined option: keep or purge.
func ParseQuarantined(s string) (Quarantined, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "keep":
		return Keep, nil
	case "purge":
		return Purge, nil
	}
	return "", fmt.Errorf("quarantined must be keep or purge, got %q", s)
}

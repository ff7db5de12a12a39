package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// reader parses variables by their specs, collecting one line per bad
// value.
type reader struct {
	lookup func(string) (string, bool)
	errs   []string
}

// raw is the variable's value, or its default when unset or empty.
func (r *reader) raw(s spec) (v string, set bool) {
	if v, ok := r.lookup(s.name); ok && strings.TrimSpace(v) != "" {
		return strings.TrimSpace(v), true
	}
	return s.def, false
}

func (r *reader) text(s spec) string {
	v, _ := r.raw(s)
	if len(s.choices) > 0 {
		v = strings.ToLower(v)
		for _, c := range s.choices {
			if v == c {
				return v
			}
		}
		r.fail(s, v)
	}
	return v
}

// whole answers the integer, Never for a never value, 0 when unset with
// no default.
func (r *reader) whole(s spec) int64 {
	v, _ := r.raw(s)
	if v == "" {
		return 0
	}
	if s.never && (v == "0" || strings.EqualFold(v, "off")) {
		return Never
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || !s.wholeOK(n) {
		r.fail(s, v)
	}
	return n
}

func (r *reader) decimal(s spec) float64 {
	v, _ := r.raw(s)
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || !s.decimalOK(f) {
		r.fail(s, v)
	}
	return f
}

func (r *reader) flag(s spec) bool {
	v, _ := r.raw(s)
	b, err := strconv.ParseBool(v)
	if err != nil {
		r.fail(s, v)
	}
	return b
}

// isSet says whether the variable has a value in the environment.
func (r *reader) isSet(s spec) bool {
	_, set := r.raw(s)
	return set
}

func (r *reader) fail(s spec, v string) {
	r.errs = append(r.errs, s.complaint(v))
}

// complaint is the one line that names a bad value and what is accepted.
func (s spec) complaint(v string) string {
	return fmt.Sprintf("%s=%s is not accepted: want %s", s.name, v, strings.ReplaceAll(s.rangeText(), "`", ""))
}

// wholeOK says whether n is in range. Never is not: in the environment it
// is spelled 0 or off, never as a negative number.
func (s spec) wholeOK(n int64) bool {
	return n >= s.min && n <= s.max && (s.exclude == nil || n != *s.exclude)
}

func (s spec) decimalOK(f float64) bool {
	return !math.IsNaN(f) && f >= s.minDec && f <= s.maxDec
}

// Package validate holds lethe's rules for input, applied once at the edge:
// names (queues, partitions, consumer groups, namespaces, tasks and ids),
// JSON that PostgreSQL can store, push items, and the bounds of the lists a
// request holds. The HTTP layer, the
// engine's push path and maintenance-mode buffering all call it, so a value
// is accepted or refused the same way on every route.
package validate

import (
	"unicode"
	"unicode/utf8"

	"github.com/lethe-mq/lethe/internal/apierr"
)

// Length limits, in bytes of UTF-8.
const (
	// NameMaxBytes bounds queue, partition, consumer group, namespace and
	// task names.
	NameMaxBytes = 512
	// IDMaxBytes bounds transaction ids, trace ids and producer names.
	IDMaxBytes = 512
)

// Name checks a required name: queue, partition, consumer group, namespace
// or task. field is how the request spells it ("queue", "items[3].queue").
func Name(field, v string) error {
	if v == "" {
		return apierr.Field(apierr.Invalid, field, "%s is required", field)
	}
	return OptionalName(field, v)
}

// OptionalName checks a name that may be absent ("").
func OptionalName(field, v string) error { return check(field, v, NameMaxBytes) }

// ID checks an optional transaction id, trace id or producer name.
func ID(field, v string) error { return check(field, v, IDMaxBytes) }

// RequiredID checks a transaction id that must be present.
func RequiredID(field, v string) error {
	if v == "" {
		return apierr.Field(apierr.Invalid, field, "%s is required", field)
	}
	return ID(field, v)
}

func check(field, v string, limit int) error {
	if p := nameProblem(v, limit); p != "" {
		return problemError(field, v, p, limit)
	}
	return nil
}

// problemError is the error for a problem nameProblem(v, limit) reported.
func problemError(field, v, problem string, limit int) error {
	if problem == problemTooLong {
		return apierr.Field(apierr.Invalid, field, "%s is %d bytes long; the limit is %d", field, len(v), limit)
	}
	return apierr.Field(apierr.Invalid, field, "%s %s", field, problem)
}

// Problems Problem reports; fixed strings, so the push path formats nothing
// unless an item is bad.
const (
	problemTooLong = "is too long"
	problemUTF8    = "is not valid UTF-8"
	problemControl = "contains a control character (U+0000 to U+001F, U+007F to U+009F)"
	problemBidi    = "contains a bidirectional override or isolate (U+202A to U+202E, U+2066 to U+2069)"
	problemBlank   = "is blank (only white space)"
)

// nameProblem says what is wrong with v as a name of at most limit bytes,
// or "" when nothing is; "" itself is not a problem (absent), so callers
// decide whether a name is required.
func nameProblem(v string, limit int) string {
	if v == "" {
		return ""
	}
	if len(v) > limit {
		return problemTooLong
	}
	blank := true
	for i := 0; i < len(v); {
		c := v[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return problemControl
			}
			if c != ' ' {
				blank = false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(v[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			return problemUTF8
		case r >= 0x80 && r <= 0x9f:
			return problemControl
		case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			return problemBidi
		}
		if !unicode.IsSpace(r) {
			blank = false
		}
		i += size
	}
	if blank {
		return problemBlank
	}
	return ""
}

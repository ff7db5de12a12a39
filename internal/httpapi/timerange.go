package httpapi

import (
	"net/url"
	"strings"
	"time"

	"github.com/lethe-mq/lethe/internal/apierr"
	"github.com/lethe-mq/lethe/internal/inspect"
)

// parseTime reads a time bound of a query: RFC 3339 (2024-01-31T10:00:00Z,
// any offset), or a bare date, read in UTC. A date as a lower bound ("from")
// is its first instant; as an upper bound ("to") its last, so to=2024-01-31
// includes the whole of the 31st. Every route with from/to reads them here.
func parseTime(v, name string, upper bool) (time.Time, error) {
	// An unescaped "+02:00" in a query string arrives as " 02:00".
	v = strings.ReplaceAll(v, " ", "+")
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	if d, err := time.Parse(time.DateOnly, v); err == nil {
		if upper {
			d = d.Add(24*time.Hour - time.Nanosecond)
		}
		return d, nil
	}
	return time.Time{}, apierr.Field(apierr.Invalid, name,
		"%s must be an RFC 3339 time (2024-01-31T10:00:00Z) or a date (2024-01-31), got %q", name, v)
}

// optionalRange reads from and to, each optional; given both, from must
// not be after to.
func optionalRange(q url.Values) (from, to *time.Time, err error) {
	if v := q.Get("from"); v != "" {
		t, err := parseTime(v, "from", false)
		if err != nil {
			return nil, nil, err
		}
		from = &t
	}
	if v := q.Get("to"); v != "" {
		t, err := parseTime(v, "to", true)
		if err != nil {
			return nil, nil, err
		}
		to = &t
	}
	if from != nil && to != nil && from.After(*to) {
		return nil, nil, apierr.Field(apierr.Invalid, "from", "from (%s) is after to (%s)",
			from.Format(time.RFC3339Nano), to.Format(time.RFC3339Nano))
	}
	return from, to, nil
}

// window reads a range that must be closed: to defaults to now and from to
// span before to; from must be before to, and the range at most maxSpan.
func window(q url.Values, now time.Time, span, maxSpan time.Duration) (from, to time.Time, err error) {
	f, t, err := optionalRange(q)
	if err != nil {
		return time.Time{}, time.Time{}, err
	}
	to = now
	if t != nil {
		to = *t
	}
	from = to.Add(-span)
	if f != nil {
		from = *f
	}
	if !from.Before(to) {
		return time.Time{}, time.Time{}, apierr.Field(apierr.Invalid, "from", "from (%s) must be before to (%s)",
			from.Format(time.RFC3339), to.Format(time.RFC3339))
	}
	if to.Sub(from) > maxSpan {
		return time.Time{}, time.Time{}, apierr.Field(apierr.Invalid, "from", "the range from %s to %s is longer than %d days; narrow it",
			from.Format(time.RFC3339), to.Format(time.RFC3339), int(maxSpan.Hours()/24))
	}
	return from.UTC(), to.UTC(), nil
}

// bodyTime parses a time given in a JSON body: RFC 3339 only.
func bodyTime(v, name string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, apierr.Field(apierr.Invalid, name, "%s must be an RFC 3339 time such as 2024-01-31T10:00:00Z, got %q", name, v)
	}
	return t, nil
}

// listParams reads what every list endpoint takes: limit/offset and an
// optional from/to range.
func listParams(q url.Values) (page inspect.Page, from, to *time.Time, err error) {
	if page, err = pageParams(q); err != nil {
		return
	}
	from, to, err = optionalRange(q)
	return
}

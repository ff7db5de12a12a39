package httpapi

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/lethe-mq/lethe/internal/engine"
)

// pageParams reads limit and offset; the engine checks their bounds.
func pageParams(q url.Values) (engine.Page, error) {
	limit, err := intParam(q.Get("limit"), "limit", engine.PageLimitDefault)
	if err != nil {
		return engine.Page{}, err
	}
	offset, err := intParam(q.Get("offset"), "offset", 0)
	if err != nil {
		return engine.Page{}, err
	}
	if limit < 1 || limit > engine.PageLimitMax {
		return engine.Page{}, fmt.Errorf("%w: query parameter limit must be between 1 and %d, got %d", engine.ErrInvalid, engine.PageLimitMax, limit)
	}
	if offset < 0 {
		return engine.Page{}, fmt.Errorf("%w: query parameter offset must be 0 or more, got %d", engine.ErrInvalid, offset)
	}
	return engine.Page{Limit: limit, Offset: offset}, nil
}

// timeParam reads an optional time: RFC 3339, or a bare date (Queen's docs
// use from=2024-01-01). A bare date as an upper bound means the end of that
// day, so to=2024-01-31 includes the 31st.
func timeParam(v, name string, upper bool) (*time.Time, error) {
	if v == "" {
		return nil, nil
	}
	// An unescaped "+02:00" in a query string arrives as " 02:00".
	v = strings.ReplaceAll(v, " ", "+")
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return &t, nil
	}
	if d, err := time.Parse(time.DateOnly, v); err == nil {
		if upper {
			d = d.Add(24*time.Hour - time.Nanosecond)
		}
		return &d, nil
	}
	return nil, fmt.Errorf("%w: %s must be an RFC 3339 time (2024-01-31T10:00:00Z) or a date (2024-01-31), got %q",
		engine.ErrInvalid, name, v)
}

// bodyTime parses a time given in a JSON body.
func bodyTime(v, name string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: %s must be an RFC 3339 time such as 2024-01-31T10:00:00Z, got %q", engine.ErrInvalid, name, v)
	}
	return t, nil
}

// writeList answers a page of a list that Queen returns as a bare array;
// the number of items in all goes in X-Total-Count.
func writeList(w http.ResponseWriter, total int, v any) {
	w.Header().Set("X-Total-Count", strconv.Itoa(total))
	writeJSON(w, http.StatusOK, v)
}

// listParams reads what every list endpoint takes: limit/offset and a
// from/to time range.
func listParams(q url.Values) (page engine.Page, from, to *time.Time, err error) {
	if page, err = pageParams(q); err != nil {
		return
	}
	if from, err = timeParam(q.Get("from"), "from", false); err != nil {
		return
	}
	to, err = timeParam(q.Get("to"), "to", true)
	return
}

package httpapi

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/lethe-mq/lethe/internal/apierr"
	"github.com/lethe-mq/lethe/internal/inspect"
	"github.com/lethe-mq/lethe/internal/validate"
)

// query parses r's query string strictly: a malformed escape (%zz) or a
// semicolon is a 400, not a parameter silently dropped.
func query(r *http.Request) (url.Values, error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, apierr.New(apierr.Invalid, "the query string is malformed: %s", err.Error())
	}
	return q, nil
}

// pathName reads a required name from the path (net/http has unescaped it,
// so %00 and %ff arrive here as bytes) and checks it.
func pathName(r *http.Request, key string) (string, error) {
	v := r.PathValue(key)
	return v, validate.Name(key, v)
}

// queryNames reads optional names from the query and checks them all.
func queryNames(q url.Values, keys ...string) (map[string]string, error) {
	out := make(map[string]string, len(keys))
	for _, k := range keys {
		v := q.Get(k)
		if err := validate.OptionalName(k, v); err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, nil
}

func intParam(v, name string, def int) (int, error) {
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, apierr.Field(apierr.Invalid, name, "query parameter %s must be a whole number, got %q", name, v)
	}
	return n, nil
}

// positiveParam is intParam for counts, where 0 is a mistake, not "default".
func positiveParam(v, name string, def int) (int, error) {
	n, err := intParam(v, name, def)
	if err == nil && n < 1 {
		err = apierr.Field(apierr.Invalid, name, "query parameter %s must be at least 1, got %d", name, n)
	}
	return n, err
}

func boolParam(v, name string, def bool) (bool, error) {
	if v == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, apierr.Field(apierr.Invalid, name, "query parameter %s must be true or false, got %q", name, v)
	}
	return b, nil
}

// pageParams reads limit and offset.
func pageParams(q url.Values) (inspect.Page, error) {
	limit, err := intParam(q.Get("limit"), "limit", inspect.PageLimitDefault)
	if err != nil {
		return inspect.Page{}, err
	}
	offset, err := intParam(q.Get("offset"), "offset", 0)
	if err != nil {
		return inspect.Page{}, err
	}
	if limit < 1 || limit > inspect.PageLimitMax {
		return inspect.Page{}, apierr.Field(apierr.Invalid, "limit", "query parameter limit must be between 1 and %d, got %d", inspect.PageLimitMax, limit)
	}
	if offset < 0 {
		return inspect.Page{}, apierr.Field(apierr.Invalid, "offset", "query parameter offset must be 0 or more, got %d", offset)
	}
	return inspect.Page{Limit: limit, Offset: offset}, nil
}

// writeList answers a page of a list that Queen returns as a bare array;
// the number of items in all goes in X-Total-Count.
func writeList(w http.ResponseWriter, total int, v any) {
	w.Header().Set("X-Total-Count", strconv.Itoa(total))
	writeJSON(w, http.StatusOK, v)
}

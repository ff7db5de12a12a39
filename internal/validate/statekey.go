package validate

import (
	"strings"
	"unicode/utf8"

	"github.com/lethe-mq/lethe/internal/apierr"
)

// StateKeyMaxBytes bounds a streaming query's state key: the key is part of
// a B-tree primary key, whose entries PostgreSQL caps near 2.7 kB.
const StateKeyMaxBytes = 2048

// StateKey checks a key of a streaming query's state. Unlike names, keys
// may hold control characters: Queen's streams SDK builds them with
// U+001F between an operator's tag, a window and the user's key. They must
// be UTF-8 without NUL, which PostgreSQL text cannot hold, and not empty.
func StateKey(field, v string) error {
	switch {
	case v == "":
		return apierr.Field(apierr.Invalid, field, "%s is required", field)
	case len(v) > StateKeyMaxBytes:
		return apierr.Field(apierr.Invalid, field, "%s is %d bytes long; the limit is %d", field, len(v), StateKeyMaxBytes)
	case !utf8.ValidString(v):
		return apierr.Field(apierr.Invalid, field, "%s %s", field, problemUTF8)
	case strings.IndexByte(v, 0) >= 0:
		return apierr.Field(apierr.Invalid, field, "%s holds U+0000, which PostgreSQL text cannot store", field)
	}
	return nil
}

package validate

import (
	"encoding/json"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/lethe-mq/lethe/internal/apierr"
)

// Problems with JSON that is well-formed but cannot be stored: jsonb refuses
// \u0000 and lone surrogates, text refuses bytes that are not UTF-8.
const (
	problemNUL       = `holds \u0000, which PostgreSQL cannot store`
	problemSurrogate = `holds a lone UTF-16 surrogate escape (\uD800 to \uDFFF without its pair)`
	problemBadUTF8   = "holds bytes that are not UTF-8"
)

// Payload checks a message payload: well-formed JSON that PostgreSQL can
// store. field names it in the error ("items[3].payload").
func Payload(field string, raw []byte) error {
	if !json.Valid(raw) {
		return apierr.Field(apierr.Invalid, field, "%s is not valid JSON", field)
	}
	if off, _, p := scanStorable(raw); p != "" {
		return apierr.Field(apierr.Invalid, field, "%s %s (at byte %d of the payload)", field, p, off)
	}
	return nil
}

// Storable checks that body, well-formed JSON, holds nothing PostgreSQL
// cannot store: a string with \u0000, a lone surrogate escape or bytes that
// are not UTF-8 (anywhere, keys included), or a number NumberProblem
// refuses. The error names the nearest object key as the field.
func Storable(body []byte) error {
	off, key, p := scanStorable(body)
	if p == "" {
		return nil
	}
	if key == "" {
		return apierr.Field(apierr.Invalid, "", "the request body %s (at byte %d)", p, off)
	}
	return apierr.Field(apierr.Invalid, key, "%s %s (at byte %d)", key, p, off)
}

// scanStorable walks well-formed JSON (malformed input cannot make it
// panic, but its answer is then meaningless) and returns the offset of the first
// value that cannot be stored, the object key it is under, and the problem;
// p is "" when everything can be stored.
func scanStorable(b []byte) (off int, key, p string) {
	var lastKey []byte
	for i := 0; i < len(b); {
		switch c := b[i]; {
		case c == '"':
			end, at, problem := scanString(b, i)
			if problem != "" {
				return at, string(lastKey), problem
			}
			if isKey(b, end) {
				lastKey = b[i+1 : end-1]
			}
			i = end
		case c == '-' || c >= '0' && c <= '9':
			end := i + 1
			for end < len(b) && isNumberByte(b[end]) {
				end++
			}
			if problem := NumberProblem(b[i:end]); problem != "" {
				return i, string(lastKey), problem
			}
			i = end
		default:
			i++
		}
	}
	return 0, "", ""
}

// scanString checks the string whose quote is at b[start] and returns the
// offset after its closing quote, or where a problem is and what it is.
func scanString(b []byte, start int) (end, at int, problem string) {
	for i := start + 1; i < len(b); {
		c := b[i]
		switch {
		case c == '"':
			return i + 1, 0, ""
		case c == '\\' && i+6 <= len(b) && b[i+1] == 'u':
			r := hex4(b[i+2 : i+6])
			switch {
			case r == 0:
				return 0, i, problemNUL
			case utf16.IsSurrogate(r):
				if r >= 0xdc00 || i+12 > len(b) || b[i+6] != '\\' || b[i+7] != 'u' {
					return 0, i, problemSurrogate
				}
				if low := hex4(b[i+8 : i+12]); low < 0xdc00 || low > 0xdfff {
					return 0, i, problemSurrogate
				}
				i += 12
				continue
			}
			i += 6
		case c == '\\':
			i += 2
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				return 0, i, problemBadUTF8
			}
			i += size
		}
	}
	return len(b), 0, "" // unterminated: not well-formed, the caller's concern
}

// isKey tells whether the string ending before b[end] is an object key.
func isKey(b []byte, end int) bool {
	for ; end < len(b); end++ {
		switch b[end] {
		case ' ', '\t', '\n', '\r':
			continue
		case ':':
			return true
		}
		return false
	}
	return false
}

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'
}

// hex4 decodes four hex digits that well-formed JSON guarantees.
func hex4(s []byte) rune {
	var r rune
	for _, c := range s {
		switch {
		case c <= '9':
			c -= '0'
		case c <= 'F':
			c -= 'A' - 10
		default:
			c -= 'a' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

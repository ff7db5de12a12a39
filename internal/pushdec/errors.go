package pushdec

import (
	"cmp"
	"errors"
	"fmt"
	"strconv"
)

// ErrSyntax is wrapped by every error Decode and DecodeAckBatch return,
// whether the body is not JSON at all, is JSON of the wrong shape or holds a
// value PostgreSQL cannot store, so the HTTP layer can answer all of them
// with 400 by checking errors.Is(err, ErrSyntax).
var ErrSyntax = errors.New("invalid push or ack batch body")

// Error says what is wrong with a push or ack batch body and where.
type Error struct {
	// Offset is the 0-based byte offset in the body where the problem is.
	Offset int
	// Path names the value being decoded, like "items[3].payload" or
	// "acknowledgments[0].leaseId"; empty for the body itself.
	Path string
	// Reason says what is wrong, like "unexpected end of input".
	Reason string
	// Malformed is true when the body is not valid JSON, false when it is
	// valid JSON of the wrong shape (a number where a string belongs).
	Malformed bool
	// Unstorable is true when the body holds a value PostgreSQL cannot
	// store (see Decode); encoding/json would have accepted it.
	Unstorable bool

	body string // what the body is ("push body"), named when Path is empty
}

func (e *Error) Error() string {
	if e.Malformed {
		if e.Path == "" {
			return fmt.Sprintf("malformed JSON at byte %d: %s", e.Offset, e.Reason)
		}
		return fmt.Sprintf("malformed JSON at byte %d in %s: %s", e.Offset, e.Path, e.Reason)
	}
	path := e.Path
	if path == "" {
		path = cmp.Or(e.body, "request body")
	}
	return fmt.Sprintf("%s %s (at byte %d)", path, e.Reason, e.Offset)
}

// Unwrap lets callers match any decode error with errors.Is(err, ErrSyntax).
func (e *Error) Unwrap() error { return ErrSyntax }

// malformed reports invalid JSON at off.
func (d *decoder) malformed(off int, reason string) error {
	return &Error{Offset: off, Path: d.path(), Reason: reason, Malformed: true, body: d.body}
}

// unstorable reports a well-formed value at off that cannot be stored.
func (d *decoder) unstorable(off int, reason string) error {
	return &Error{Offset: off, Path: d.path(), Reason: reason, Unstorable: true, body: d.body}
}

// unexpectedEnd reports a body that stops in the middle of a value.
func (d *decoder) unexpectedEnd() error {
	return d.malformed(len(d.buf), "unexpected end of input")
}

// invalidChar reports the byte at off, which cannot appear where it does;
// context reads like encoding/json's ("looking for beginning of value").
func (d *decoder) invalidChar(off int, context string) error {
	if off >= len(d.buf) {
		return d.unexpectedEnd()
	}
	return d.malformed(off, "invalid character "+quoteChar(d.buf[off])+" "+context)
}

// wrongType reports a well-formed value of the wrong kind at off, or the
// syntax error if the value does not even start like JSON.
func (d *decoder) wrongType(off int, want string) error {
	if off >= len(d.buf) {
		return d.unexpectedEnd()
	}
	got := kindOf(d.buf[off])
	if got == "" {
		return d.invalidChar(off, "looking for beginning of value")
	}
	return &Error{Offset: off, Path: d.path(), Reason: "must be " + want + ", got " + got, body: d.body}
}

// kindOf names the JSON kind of the value starting with c, or "" if no value
// starts with c.
func kindOf(c byte) string {
	switch {
	case c == '{':
		return "object"
	case c == '[':
		return "array"
	case c == '"':
		return "string"
	case c == 't' || c == 'f':
		return "boolean"
	case c == 'n':
		return "null"
	case c == '-' || '0' <= c && c <= '9':
		return "number"
	}
	return ""
}

// path names where the decoder is, for error messages.
func (d *decoder) path() string {
	var p string
	if d.index >= 0 {
		p = d.array + "[" + strconv.Itoa(d.index) + "]"
	}
	if d.keyEnd > d.keyStart {
		key := d.buf[d.keyStart:d.keyEnd]
		switch {
		case p == "" && simpleKey(key):
			p = string(key)
		case simpleKey(key):
			p += "." + string(key)
		default:
			if len(key) > 40 {
				key = key[:40]
			}
			p += "[" + strconv.Quote(string(key)) + "]"
		}
	}
	return p
}

// simpleKey tells whether key can be printed bare in a path.
func simpleKey(key []byte) bool {
	for _, c := range key {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return len(key) <= 40
}

// quoteChar formats c like encoding/json does in its syntax errors.
func quoteChar(c byte) string {
	switch c {
	case '\'':
		return `'\''`
	case '"':
		return `'"'`
	}
	s := strconv.Quote(string(rune(c)))
	return "'" + s[1:len(s)-1] + "'"
}

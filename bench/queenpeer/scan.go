package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/lethe-mq/lethe/bench/internal/lethebench"
)

// scanIDs reads the transactionId, partitionId and leaseId of every message
// of a pop answer, whatever order the keys come in: lethe writes them in
// one order, Queen (PostgreSQL jsonb, nlohmann::json) in others, and puts
// a partitionId and a leaseId of its own beside the messages array. It
// walks the JSON without decoding the payloads, which the load generator
// would otherwise spend as much CPU on as a server spends serving them.
// An empty body (204) is no messages.
func scanIDs(body []byte) ([]lethebench.Message, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, nil
	}
	s := &scanner{b: body}
	var out []lethebench.Message
	err := s.object(func(key []byte) error {
		if string(key) != "messages" {
			return s.skip()
		}
		out = out[:0] // a repeated key: the last one counts, as in encoding/json
		return s.array(func() error {
			m, err := s.message()
			out = append(out, m)
			return err
		})
	})
	if err != nil {
		return nil, fmt.Errorf("pop answer at byte %d: %w", s.i, err)
	}
	return out, nil
}

// message reads one element of the messages array.
func (s *scanner) message() (lethebench.Message, error) {
	var m lethebench.Message
	err := s.object(func(key []byte) error {
		var dst *string
		switch string(key) {
		case "transactionId":
			dst = &m.TransactionID
		case "partitionId":
			dst = &m.PartitionID
		case "leaseId":
			dst = &m.LeaseID
		default:
			return s.skip()
		}
		*dst = ""
		if s.peek() != '"' {
			return s.skip() // null (a lease of an auto-acked pop): no id
		}
		v, err := s.str()
		*dst = v
		return err
	})
	return m, err
}

var errTruncated = errors.New("answer ends early")

// scanner walks JSON text; it checks the structure it relies on, not
// every rule of JSON (numbers and literals are skipped, not parsed).
type scanner struct {
	b []byte
	i int
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

// peek is the next byte after white space, 0 at the end.
func (s *scanner) peek() byte {
	s.ws()
	if s.i >= len(s.b) {
		return 0
	}
	return s.b[s.i]
}

func (s *scanner) expect(c byte) error {
	if got := s.peek(); got != c {
		if got == 0 {
			return errTruncated
		}
		return fmt.Errorf("want %q, found %q", c, got)
	}
	s.i++
	return nil
}

// object calls member with each key, positioned at its value, which
// member must consume. null is an object without members.
func (s *scanner) object(member func(key []byte) error) error {
	if s.null() {
		return nil
	}
	return s.list('{', '}', func() error {
		key, err := s.key()
		if err != nil {
			return err
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		return member(key)
	})
}

// array calls elem for each element, positioned at it; null is empty.
func (s *scanner) array(elem func() error) error {
	if s.null() {
		return nil
	}
	return s.list('[', ']', elem)
}

func (s *scanner) list(opening, closing byte, item func() error) error {
	if err := s.expect(opening); err != nil {
		return err
	}
	if s.peek() == closing {
		s.i++
		return nil
	}
	for {
		if err := item(); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case closing:
			s.i++
			return nil
		case 0:
			return errTruncated
		default:
			return fmt.Errorf("want ',' or %q, found %q", closing, s.b[s.i])
		}
	}
}

func (s *scanner) null() bool {
	if s.peek() == 'n' && bytes.HasPrefix(s.b[s.i:], []byte("null")) {
		s.i += 4
		return true
	}
	return false
}

// rawStr returns a string's bytes as written, escapes and all.
func (s *scanner) rawStr() ([]byte, error) {
	if err := s.expect('"'); err != nil {
		return nil, err
	}
	start := s.i
	for {
		j := bytes.IndexByte(s.b[s.i:], '"')
		if j < 0 {
			return nil, errTruncated
		}
		s.i += j + 1
		if backslashesBefore(s.b, s.i-1)%2 == 0 {
			return s.b[start : s.i-1], nil
		}
	}
}

func backslashesBefore(b []byte, i int) int {
	n := 0
	for i-n-1 >= 0 && b[i-n-1] == '\\' {
		n++
	}
	return n
}

// key reads an object's key, unescaped only when it has escapes (keys are
// compared, not kept, so the common case allocates nothing).
func (s *scanner) key() ([]byte, error) {
	raw, err := s.rawStr()
	if err != nil || bytes.IndexByte(raw, '\\') < 0 {
		return raw, err
	}
	v, err := s.unescape(raw)
	return []byte(v), err
}

// str reads a string value, unescaped.
func (s *scanner) str() (string, error) {
	raw, err := s.rawStr()
	if err != nil || bytes.IndexByte(raw, '\\') < 0 {
		return string(raw), err
	}
	return s.unescape(raw)
}

// unescape decodes raw, the string that ends just before s.i.
func (s *scanner) unescape(raw []byte) (string, error) {
	var v string
	quoted := s.b[s.i-len(raw)-2 : s.i]
	if err := json.Unmarshal(quoted, &v); err != nil {
		return "", fmt.Errorf("string %s: %w", quoted, err)
	}
	return v, nil
}

// skip passes over one value of any kind.
func (s *scanner) skip() error {
	switch c := s.peek(); c {
	case 0:
		return errTruncated
	case '"':
		_, err := s.rawStr()
		return err
	case '{':
		return s.object(func([]byte) error { return s.skip() })
	case '[':
		return s.array(s.skip)
	case ',', ':', '}', ']':
		return fmt.Errorf("want a value, found %q", c)
	default: // a number, true, false, null
		for s.i < len(s.b) && bytes.IndexByte([]byte(",}] \t\r\n"), s.b[s.i]) < 0 {
			s.i++
		}
		return nil
	}
}

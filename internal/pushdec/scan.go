package pushdec

import (
	"encoding/binary"
	"math/bits"
)

// The scanners below validate one JSON token starting at pos and return the
// position just past it. They follow RFC 8259 exactly as encoding/json's
// scanner does, and are written for the common case: no error, few escapes.

// skipSpace returns the position of the first non-whitespace byte at or after
// pos. JSON whitespace is exactly space, tab, newline and carriage return.
func skipSpace(buf []byte, pos int) int {
	for pos < len(buf) {
		c := buf[pos]
		if c > ' ' || c != ' ' && c != '\n' && c != '\t' && c != '\r' {
			break
		}
		pos++
	}
	return pos
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// specialBytes marks, in the high bit of each byte, the bytes of x that end a
// run of plain string content: '"', '\\' and control characters. The lowest
// marked byte is exact; borrows can only mark bytes above a real match.
func specialBytes(x uint64) uint64 {
	quote := x ^ (ones * '"')
	backslash := x ^ (ones * '\\')
	control := (x - ones*0x20) & ^x
	return (control | (quote-ones)&^quote | (backslash-ones)&^backslash) & highs
}

// scanString validates the string starting with the quote at pos. It returns
// the position after the closing quote and whether the string holds escapes.
func (d *decoder) scanString(pos int) (end int, escaped bool, err error) {
	buf := d.buf
	i := pos + 1
	for {
		for i+8 <= len(buf) {
			if m := specialBytes(binary.LittleEndian.Uint64(buf[i:])); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		if i >= len(buf) {
			return 0, false, d.unexpectedEnd()
		}
		switch c := buf[i]; {
		case c == '"':
			return i + 1, escaped, nil
		case c == '\\':
			escaped = true
			if i, err = d.scanEscape(i); err != nil {
				return 0, false, err
			}
		case c < 0x20:
			return 0, false, d.invalidChar(i, "in string literal")
		default:
			i++ // plain byte in the last few bytes of the body
		}
	}
}

// scanEscape validates the escape sequence whose backslash is at pos and
// returns the position after it.
func (d *decoder) scanEscape(pos int) (int, error) {
	buf := d.buf
	if pos+1 >= len(buf) {
		return 0, d.unexpectedEnd()
	}
	switch buf[pos+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return pos + 2, nil
	case 'u':
		for i := pos + 2; i < pos+6; i++ {
			if i >= len(buf) {
				return 0, d.unexpectedEnd()
			}
			if !isHex(buf[i]) {
				return 0, d.invalidChar(i, `in \u hexadecimal character escape`)
			}
		}
		return pos + 6, nil
	}
	return 0, d.invalidChar(pos+1, "in string escape code")
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// scanNumber validates the number starting at pos:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
// What follows the number is the caller's business, so "01" scans as "0".
func (d *decoder) scanNumber(pos int) (int, error) {
	buf := d.buf
	i := pos
	if buf[i] == '-' {
		i++
	}
	switch {
	case i >= len(buf):
		return 0, d.unexpectedEnd()
	case buf[i] == '0':
		i++
	case isDigit(buf[i]):
		i++
		for i < len(buf) && isDigit(buf[i]) {
			i++
		}
	default:
		return 0, d.invalidChar(i, "in numeric literal")
	}
	if i < len(buf) && buf[i] == '.' {
		i++
		if i >= len(buf) {
			return 0, d.unexpectedEnd()
		}
		if !isDigit(buf[i]) {
			return 0, d.invalidChar(i, "after decimal point in numeric literal")
		}
		for i < len(buf) && isDigit(buf[i]) {
			i++
		}
	}
	if i < len(buf) && (buf[i] == 'e' || buf[i] == 'E') {
		i++
		if i < len(buf) && (buf[i] == '+' || buf[i] == '-') {
			i++
		}
		if i >= len(buf) {
			return 0, d.unexpectedEnd()
		}
		if !isDigit(buf[i]) {
			return 0, d.invalidChar(i, "in exponent of numeric literal")
		}
		for i < len(buf) && isDigit(buf[i]) {
			i++
		}
	}
	return i, nil
}

// scanLiteral validates true, false or null starting at pos.
func (d *decoder) scanLiteral(pos int) (int, error) {
	var lit string
	switch d.buf[pos] {
	case 't':
		lit = "true"
	case 'f':
		lit = "false"
	default:
		lit = "null"
	}
	if pos+len(lit) <= len(d.buf) && string(d.buf[pos:pos+len(lit)]) == lit {
		return pos + len(lit), nil
	}
	for i := 1; i < len(lit); i++ {
		if pos+i >= len(d.buf) {
			return 0, d.unexpectedEnd()
		}
		if d.buf[pos+i] != lit[i] {
			return 0, d.invalidChar(pos+i, "in literal "+lit+" (expecting "+quoteChar(lit[i])+")")
		}
	}
	return pos + len(lit), nil // unreachable: the fast check above matched
}

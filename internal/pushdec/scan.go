package pushdec

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/lethe-mq/lethe/internal/validate"
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
// run of plain ASCII string content: '"', '\\', control characters and bytes
// of multi-byte UTF-8, which are checked one rune at a time. The lowest
// marked byte is exact; borrows can only mark bytes above a real match.
func specialBytes(x uint64) uint64 {
	quote := x ^ (ones * '"')
	backslash := x ^ (ones * '\\')
	control := (x - ones*0x20) & ^x
	return (control | (quote-ones)&^quote | (backslash-ones)&^backslash | x) & highs
}

// scanString validates the string starting with the quote at pos. It returns
// the position after the closing quote and whether the string holds escapes.
// Beyond JSON's grammar it refuses what PostgreSQL cannot store: bytes that
// are not UTF-8, \u0000 and lone surrogate escapes.
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
		case c < utf8.RuneSelf:
			i++ // plain byte in the last few bytes of the body
		default:
			r, size := utf8.DecodeRune(buf[i:])
			if r == utf8.RuneError && size == 1 {
				return 0, false, d.unstorable(i, "holds bytes that are not UTF-8")
			}
			i += size
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
		r, err := d.scanHex4(pos + 2)
		if err != nil {
			return 0, err
		}
		return d.checkCodePoint(pos, r)
	}
	return 0, d.invalidChar(pos+1, "in string escape code")
}

// scanHex4 validates and decodes the four hex digits at pos.
func (d *decoder) scanHex4(pos int) (rune, error) {
	buf := d.buf
	for i := pos; i < pos+4; i++ {
		if i >= len(buf) {
			return 0, d.unexpectedEnd()
		}
		if !isHex(buf[i]) {
			return 0, d.invalidChar(i, `in \u hexadecimal character escape`)
		}
	}
	return hex4(buf[pos:]), nil
}

// checkCodePoint refuses \u0000 and surrogates without their pair for the
// escape r at pos, and returns the position after it (and its pair).
func (d *decoder) checkCodePoint(pos int, r rune) (int, error) {
	switch {
	case r == 0:
		return 0, d.unstorable(pos, `holds \u0000, which PostgreSQL cannot store`)
	case !utf16.IsSurrogate(r):
		return pos + 6, nil
	}
	const lone = `holds a lone UTF-16 surrogate escape (\uD800 to \uDFFF without its pair)`
	buf := d.buf
	if r >= 0xdc00 || pos+8 > len(buf) || buf[pos+6] != '\\' || buf[pos+7] != 'u' {
		return 0, d.unstorable(pos, lone)
	}
	low, err := d.scanHex4(pos + 8)
	if err != nil {
		return 0, err
	}
	if low < 0xdc00 || low > 0xdfff {
		return 0, d.unstorable(pos, lone)
	}
	return pos + 12, nil
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// scanNumber validates the number starting at pos:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
// What follows the number is the caller's business, so "01" scans as "0".
// A number PostgreSQL or a float64 cannot hold (validate.NumberProblem) is
// refused.
func (d *decoder) scanNumber(pos int) (int, error) {
	end, hasExp, err := d.scanNumberSyntax(pos)
	if err != nil {
		return 0, err
	}
	if hasExp || end-pos > 15 {
		if p := validate.NumberProblem(d.buf[pos:end]); p != "" {
			return 0, d.unstorable(pos, p)
		}
	}
	return end, nil
}

func (d *decoder) scanNumberSyntax(pos int) (end int, hasExp bool, err error) {
	buf := d.buf
	i := pos
	if buf[i] == '-' {
		i++
	}
	switch {
	case i >= len(buf):
		return 0, false, d.unexpectedEnd()
	case buf[i] == '0':
		i++
	case isDigit(buf[i]):
		i++
		for i < len(buf) && isDigit(buf[i]) {
			i++
		}
	default:
		return 0, false, d.invalidChar(i, "in numeric literal")
	}
	if i < len(buf) && buf[i] == '.' {
		i++
		if i >= len(buf) {
			return 0, false, d.unexpectedEnd()
		}
		if !isDigit(buf[i]) {
			return 0, false, d.invalidChar(i, "after decimal point in numeric literal")
		}
		for i < len(buf) && isDigit(buf[i]) {
			i++
		}
	}
	if i < len(buf) && (buf[i] == 'e' || buf[i] == 'E') {
		hasExp = true
		i++
		if i < len(buf) && (buf[i] == '+' || buf[i] == '-') {
			i++
		}
		if i >= len(buf) {
			return 0, false, d.unexpectedEnd()
		}
		if !isDigit(buf[i]) {
			return 0, false, d.invalidChar(i, "in exponent of numeric literal")
		}
		for i < len(buf) && isDigit(buf[i]) {
			i++
		}
	}
	return i, hasExp, nil
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

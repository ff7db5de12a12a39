package pushdec

import (
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// unquote decodes the content of a JSON string (between the quotes, already
// validated) exactly as encoding/json does: escapes are resolved, a \u
// surrogate pair becomes one rune, a lone surrogate becomes U+FFFD, and each
// byte of invalid UTF-8 becomes U+FFFD.
func unquote(raw []byte) string {
	var b strings.Builder
	b.Grow(len(raw) + utf8.UTFMax)
	for i := 0; i < len(raw); {
		c := raw[i]
		switch {
		case c == '\\':
			switch e := raw[i+1]; e {
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				r := hex4(raw[i+2:])
				i += 6
				if utf16.IsSurrogate(r) {
					if low := nextU4(raw[i:]); low >= 0 {
						if pair := utf16.DecodeRune(r, low); pair != unicode.ReplacementChar {
							b.WriteRune(pair)
							i += 6
							continue
						}
					}
					r = unicode.ReplacementChar
				}
				b.WriteRune(r)
				continue
			default: // '"', '\\', '/'
				b.WriteByte(e)
			}
			i += 2
		case c < utf8.RuneSelf:
			b.WriteByte(c)
			i++
		default:
			r, size := utf8.DecodeRune(raw[i:])
			b.WriteRune(r) // RuneError for invalid UTF-8, one per bad byte
			i += size
		}
	}
	return b.String()
}

// nextU4 decodes a \uXXXX escape at the start of s, or returns -1.
func nextU4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	return hex4(s[2:])
}

// hex4 decodes four hex digits, already validated.
func hex4(s []byte) rune {
	var r rune
	for _, c := range s[:4] {
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

// foldName folds a key the way encoding/json does before its case-insensitive
// field lookup: ASCII letters to upper case, other runes to the smallest rune
// of their case-folding orbit (so U+212A KELVIN SIGN matches "k" and U+017F
// LONG S matches "s").
func foldName(name string) string {
	out := make([]byte, 0, len(name))
	for i := 0; i < len(name); {
		if c := name[i]; c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			out = append(out, c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(name[i:])
		out = utf8.AppendRune(out, foldRune(r))
		i += n
	}
	return string(out)
}

// foldRune returns the smallest rune in r's case-folding orbit.
func foldRune(r rune) rune {
	for {
		r2 := unicode.SimpleFold(r)
		if r2 <= r {
			return r2
		}
		r = r2
	}
}

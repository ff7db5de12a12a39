package validate

import "strconv"

// Bounds of a JSON number PostgreSQL's jsonb can store (its numeric keeps at
// most 16,383 digits after the point) and that reads the same as a float64
// in every client.
const (
	// NumberMaxBytes bounds how a number is written.
	NumberMaxBytes = 1000
	// exponentMaxDigits bounds the digits of an exponent, leading zeros
	// aside: |exponent| <= 9999.
	exponentMaxDigits = 4
	// plainNumberBytes: a number this short without an exponent has at most
	// this many digits, so it cannot leave float64's range.
	plainNumberBytes = 300
)

// NumberProblem says what keeps the JSON number tok (valid JSON number
// syntax) from being stored, or "". A number must be within float64's
// range: at most about 1.8e308 in magnitude, and one written with a
// non-zero digit must not round to zero (below about 5e-324); it must be
// written in at most NumberMaxBytes bytes with an exponent of at most four
// digits.
func NumberProblem(tok []byte) string {
	exp := -1
	for i, c := range tok {
		if c == 'e' || c == 'E' {
			exp = i
			break
		}
	}
	if exp < 0 && len(tok) <= plainNumberBytes {
		return ""
	}
	if len(tok) > NumberMaxBytes {
		return "is a number written with more than 1000 characters"
	}
	if exp >= 0 && significantDigits(tok[exp+1:]) > exponentMaxDigits {
		return "is a number with an exponent beyond ±9999"
	}
	f, err := strconv.ParseFloat(string(tok), 64)
	if err != nil {
		return "is a number beyond the range of a float64 (about ±1.8e308)"
	}
	if f == 0 && nonZeroMantissa(tok, exp) {
		return "is a number too close to zero for a float64 (below about 5e-324)"
	}
	return ""
}

// significantDigits counts the digits of an exponent without sign and
// leading zeros.
func significantDigits(exp []byte) int {
	n, leading := 0, true
	for _, c := range exp {
		if c < '0' || c > '9' || leading && c == '0' {
			continue
		}
		leading = false
		n++
	}
	return n
}

func nonZeroMantissa(tok []byte, exp int) bool {
	if exp >= 0 {
		tok = tok[:exp]
	}
	for _, c := range tok {
		if c >= '1' && c <= '9' {
			return true
		}
	}
	return false
}

package pushdec

// Valid reports whether b is one JSON value, with optional whitespace around
// it, that PostgreSQL can store: json.Valid's answer narrowed by the rules a
// push is held to (no \u0000, no lone surrogate, no invalid UTF-8, numbers
// within float64), at the speed of this package's scanner. Readers use it to
// check payloads coming back from storage before writing them into a
// response verbatim: anything a push of today would refuse (stored by an
// older lethe) is served as unreadable rather than passed on.
func Valid(b []byte) bool {
	d := decoder{buf: b, index: -1}
	if d.skipValue(0) != nil {
		return false
	}
	return skipSpace(b, d.pos) == len(b)
}

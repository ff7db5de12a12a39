package pushdec

import "strings"

// maxSlots is the most string fields an element has (an ack has six).
const maxSlots = 6

// plainStrings holds an element's string values that need no unescaping,
// as slices of the body, until the element's object closes: then they
// become strings sharing one allocation instead of one each.
type plainStrings struct {
	raw [maxSlots][]byte
	set [maxSlots]bool
}

// stringField decodes a string or null into dst, the element's string in
// slot; null leaves dst as it is. A plain string equal to the slot's last
// value (for the slots in d.shared) reuses it; any other plain string is
// parked in plain and stored by flush.
func (d *decoder) stringField(dst *string, plain *plainStrings, slot int) error {
	pos := d.pos
	if pos < len(d.buf) && d.buf[pos] == 'n' {
		end, err := d.scanLiteral(pos)
		d.pos = end
		return err
	}
	if pos >= len(d.buf) || d.buf[pos] != '"' {
		return d.wrongType(pos, "a string")
	}
	end, escaped, err := d.scanString(pos)
	if err != nil {
		return err
	}
	d.pos = end
	raw := d.buf[pos+1 : end-1]
	plain.set[slot] = false // this value replaces any earlier one
	switch {
	case escaped:
		*dst = unquote(raw)
	case d.shared>>slot&1 == 1 && d.last[slot] == string(raw):
		*dst = d.last[slot]
	default: // scanString refused bytes that are not UTF-8: raw is the string
		plain.raw[slot], plain.set[slot] = raw, true
	}
	return nil
}

// flush stores the parked strings of an element into dst, its string
// fields by slot, and remembers the shared slots' values.
func (d *decoder) flush(dst *[maxSlots]*string, plain *plainStrings) {
	total, count := 0, 0
	for slot, set := range plain.set {
		if set {
			total += len(plain.raw[slot])
			count++
		}
	}
	if count == 0 {
		return
	}
	var all string
	if count == 1 {
		for slot, set := range plain.set {
			if set {
				all = string(plain.raw[slot])
			}
		}
	} else {
		var b strings.Builder
		b.Grow(total)
		for slot, set := range plain.set {
			if set {
				b.Write(plain.raw[slot])
			}
		}
		all = b.String()
	}
	off := 0
	for slot, set := range plain.set {
		if set {
			*dst[slot] = all[off : off+len(plain.raw[slot])]
			off += len(plain.raw[slot])
			if d.shared>>slot&1 == 1 {
				d.last[slot] = *dst[slot]
			}
		}
	}
}

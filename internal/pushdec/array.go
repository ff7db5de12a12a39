package pushdec

// arrayField decodes the value of the key holding the body's list (items,
// acknowledgments): an array whose elements elem decodes, or null, which
// sets the slice to nil as encoding/json does. want names the expected
// value in errors ("an array of items").
func arrayField[T any](d *decoder, dst *[]T, want string, elem func(*T) error) error {
	if d.pos < len(d.buf) && d.buf[d.pos] == 'n' {
		pos, err := d.scanLiteral(d.pos)
		if err != nil {
			return err
		}
		d.pos = pos
		*dst = nil
		return nil
	}
	if d.pos >= len(d.buf) || d.buf[d.pos] != '[' {
		return d.wrongType(d.pos, want)
	}
	return decodeArray(d, dst, elem)
}

// decodeArray decodes the array at d.pos into *dst the way encoding/json
// fills a slice: element i is decoded into the slice's existing element i
// when there is one (a repeated key merges into the earlier elements), and
// an empty array leaves an empty, non-nil slice.
func decodeArray[T any](d *decoder, dst *[]T, elem func(*T) error) error {
	buf := d.buf
	start := d.pos
	elems := *dst
	i := 0
	d.keyStart, d.keyEnd = 0, 0 // errors name the element, not the list's key
	pos := skipSpace(buf, d.pos+1)
	if pos < len(buf) && buf[pos] == ']' {
		pos++
	} else {
		for {
			if i >= cap(elems) {
				elems = grow(d, elems, start, pos)
			}
			if i >= len(elems) {
				elems = elems[:i+1]
			}
			d.index, d.pos = i, pos
			if err := elem(&elems[i]); err != nil {
				return err
			}
			i++
			pos = skipSpace(buf, d.pos)
			if pos >= len(buf) {
				return d.unexpectedEnd()
			}
			if buf[pos] == ']' {
				pos++
				break
			}
			if buf[pos] != ',' {
				return d.invalidChar(pos, "after array element")
			}
			pos = skipSpace(buf, pos+1)
		}
	}
	d.index, d.pos = -1, pos
	if i == 0 {
		elems = []T{}
	}
	*dst = elems[:i]
	return nil
}

// grow makes room for one more element, keeping elements past len
// (encoding/json decodes into them if a later array for the same key is
// longer). Once a few elements are in, it sizes the slice from their
// average length so a batch of similar elements costs two allocations.
func grow[T any](d *decoder, elems []T, arrayStart, pos int) []T {
	n := cap(elems)
	newCap := max(2*n, 8)
	if n > 0 {
		avg := max((pos-arrayStart)/n, 1)
		if estimate := n + (len(d.buf)-pos)/avg + 1; estimate > newCap {
			newCap = min(estimate, max(newCap, 1<<14))
		}
	}
	grown := make([]T, n, newCap)
	copy(grown, elems[:n])
	return grown[:len(elems)]
}

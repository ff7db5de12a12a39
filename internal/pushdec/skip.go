package pushdec

// maxDepth is encoding/json's nesting limit: 10000 open arrays and objects,
// counting the ones that enclose the value.
const maxDepth = 10000

// skipValue validates the JSON value starting at d.pos (after any
// whitespace), which sits inside outer open arrays and objects, and leaves
// d.pos just past it. It walks nested values with an explicit stack instead
// of recursion, so deep input costs no Go stack.
func (d *decoder) skipValue(outer int) error {
	buf := d.buf
	pos := d.pos
	depth := 0         // open containers inside this value
	var shallow uint64 // bit l set: level l (< 64) is an object; deeper levels live in d.deepKinds
	var err error
	for {
		// A value starts here.
		pos = skipSpace(buf, pos)
		if pos >= len(buf) {
			return d.unexpectedEnd()
		}
		switch c := buf[pos]; c {
		case '"':
			if pos, _, err = d.scanString(pos); err != nil {
				return err
			}
		case '{', '[':
			if outer+depth+1 > maxDepth {
				return d.malformed(pos, "exceeded max depth")
			}
			isObject := c == '{'
			if depth < 64 {
				shallow = shallow&^(1<<depth) | b2u(isObject)<<depth
			} else {
				d.deepKinds = append(d.deepKinds[:depth-64], isObject)
			}
			depth++
			pos = skipSpace(buf, pos+1)
			if pos >= len(buf) {
				return d.unexpectedEnd()
			}
			if isObject {
				if buf[pos] != '}' {
					if pos, err = d.scanKey(pos); err != nil {
						return err
					}
					continue
				}
			} else if buf[pos] != ']' {
				continue
			}
			pos++ // empty container
			depth--
		case 't', 'f', 'n':
			if pos, err = d.scanLiteral(pos); err != nil {
				return err
			}
		default:
			if c != '-' && !isDigit(c) {
				return d.invalidChar(pos, "looking for beginning of value")
			}
			if pos, err = d.scanNumber(pos); err != nil {
				return err
			}
		}

		// A value ended: close containers until one wants another value.
		for {
			if depth == 0 {
				d.pos = pos
				return nil
			}
			pos = skipSpace(buf, pos)
			if pos >= len(buf) {
				return d.unexpectedEnd()
			}
			level := depth - 1
			inObject := level < 64 && shallow>>level&1 == 1 || level >= 64 && d.deepKinds[level-64]
			c := buf[pos]
			if c == ',' {
				if inObject {
					if pos, err = d.scanKey(skipSpace(buf, pos+1)); err != nil {
						return err
					}
				} else {
					pos++
				}
				break
			}
			if inObject && c == '}' || !inObject && c == ']' {
				pos++
				depth--
				continue
			}
			if inObject {
				return d.invalidChar(pos, "after object key:value pair")
			}
			return d.invalidChar(pos, "after array element")
		}
	}
}

// scanKey validates an object key at pos and the colon after it, and returns
// the position after the colon.
func (d *decoder) scanKey(pos int) (int, error) {
	if pos >= len(d.buf) {
		return 0, d.unexpectedEnd()
	}
	if d.buf[pos] != '"' {
		return 0, d.invalidChar(pos, "looking for beginning of object key string")
	}
	pos, _, err := d.scanString(pos)
	if err != nil {
		return 0, err
	}
	return d.scanColon(pos)
}

// scanColon expects optional whitespace and a colon at pos.
func (d *decoder) scanColon(pos int) (int, error) {
	pos = skipSpace(d.buf, pos)
	if pos >= len(d.buf) {
		return 0, d.unexpectedEnd()
	}
	if d.buf[pos] != ':' {
		return 0, d.invalidChar(pos, "after object key")
	}
	return pos + 1, nil
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

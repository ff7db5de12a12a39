// Package pushdec decodes the body of POST /api/v1/push in one pass over the
// bytes. encoding/json scans such a body three or four times (validation,
// decoding, and skipping each json.RawMessage payload), which dominated the
// push path's CPU; this decoder validates, unescapes and slices in one go
// while matching encoding/json's results exactly.
package pushdec

import "github.com/lethe-mq/lethe/api"

// Decode parses a push body, {"items":[{"queue":..., "partition":...,
// "payload":..., "transactionId":..., "traceId":...}, ...]}, with the same
// outcome as json.Unmarshal(body, &api.PushRequest{}) for every body it
// accepts: the fields get the same values (keys match exactly or
// case-insensitively, the last of duplicate keys wins, unknown keys are
// validated and ignored, null leaves a string empty, "payload": null is
// RawMessage("null") and a missing payload is nil).
//
// It accepts less than encoding/json: anywhere in the body (keys, unknown
// members and payloads included) it refuses what PostgreSQL cannot store,
// which encoding/json would accept or silently rewrite to U+FFFD: bytes
// that are not UTF-8, \u0000, a lone surrogate escape, and a number
// validate.NumberProblem refuses (beyond float64's range, for one). Such an
// error has Unstorable set. A body that is just null is refused too
// (json.Unmarshal ignores it).
//
// Each Payload aliases body rather than copying it, so the caller must keep
// body alive and unmodified while it uses the items.
//
// Every error wraps ErrSyntax and is an *Error naming the byte offset and the
// field, e.g. "items[3].queue must be a string, got number (at byte 57)".
func Decode(body []byte) (api.PushRequest, error) {
	d := decoder{buf: body, index: -1}
	var req api.PushRequest
	if err := d.request(&req); err != nil {
		return api.PushRequest{}, err
	}
	return req, nil
}

// decoder holds the body, the read position, and where it is in the
// document for error messages.
type decoder struct {
	buf []byte
	pos int

	index            int // item being decoded, or -1 outside the items array
	keyStart, keyEnd int // raw key of the value being decoded, if keyEnd > keyStart

	lastQueue, lastPartition string // most batches repeat these: reuse the string
	deepKinds                []bool // skipValue's container kinds below depth 64
}

// request decodes the top-level object.
func (d *decoder) request(req *api.PushRequest) error {
	d.pos = skipSpace(d.buf, 0)
	if d.pos >= len(d.buf) || d.buf[d.pos] != '{' {
		return d.wrongType(d.pos, "a JSON object")
	}
	err := d.object(func(key []byte, escaped bool) error {
		if lookupField(key, escaped, requestFields) == fieldItems {
			return d.items(req)
		}
		return d.skipValue(1)
	})
	if err != nil {
		return err
	}
	if d.pos = skipSpace(d.buf, d.pos); d.pos < len(d.buf) {
		return d.invalidChar(d.pos, "after top-level value")
	}
	return nil
}

// object walks the object starting with the '{' at d.pos, calling member with
// d.pos at each value (after whitespace); member must consume the value.
func (d *decoder) object(member func(key []byte, escaped bool) error) error {
	buf := d.buf
	pos := skipSpace(buf, d.pos+1)
	if pos < len(buf) && buf[pos] == '}' {
		d.pos = pos + 1
		return nil
	}
	for {
		if pos >= len(buf) {
			return d.unexpectedEnd()
		}
		if buf[pos] != '"' {
			return d.invalidChar(pos, "looking for beginning of object key string")
		}
		end, escaped, err := d.scanString(pos)
		if err != nil {
			return err
		}
		keyStart := pos + 1
		if pos, err = d.scanColon(end); err != nil {
			return err
		}
		d.keyStart, d.keyEnd = keyStart, end-1
		d.pos = skipSpace(buf, pos)
		if err := member(buf[d.keyStart:d.keyEnd], escaped); err != nil {
			return err
		}
		d.keyStart, d.keyEnd = 0, 0
		pos = skipSpace(buf, d.pos)
		if pos >= len(buf) {
			return d.unexpectedEnd()
		}
		switch buf[pos] {
		case ',':
			pos = skipSpace(buf, pos+1)
		case '}':
			d.pos = pos + 1
			return nil
		default:
			return d.invalidChar(pos, "after object key:value pair")
		}
	}
}

// items decodes the value of "items": an array of items, or null.
func (d *decoder) items(req *api.PushRequest) error {
	if d.pos < len(d.buf) && d.buf[d.pos] == 'n' {
		pos, err := d.scanLiteral(d.pos)
		if err != nil {
			return err
		}
		d.pos = pos
		req.Items = nil
		return nil
	}
	if d.pos >= len(d.buf) || d.buf[d.pos] != '[' {
		return d.wrongType(d.pos, "an array of items")
	}
	return d.itemsArray(req)
}

// itemsArray decodes the items array into req.Items the way encoding/json
// fills a slice: element i is decoded into the slice's existing element i
// when there is one (a repeated "items" key merges into the earlier items),
// and an empty array leaves an empty, non-nil slice.
func (d *decoder) itemsArray(req *api.PushRequest) error {
	buf := d.buf
	start := d.pos
	items := req.Items
	i := 0
	d.keyStart, d.keyEnd = 0, 0 // errors name the item, not the "items" key
	pos := skipSpace(buf, d.pos+1)
	if pos < len(buf) && buf[pos] == ']' {
		pos++
	} else {
		for {
			if i >= cap(items) {
				items = d.grow(items, start, pos)
			}
			if i >= len(items) {
				items = items[:i+1]
			}
			d.index, d.pos = i, pos
			if err := d.item(&items[i]); err != nil {
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
		items = []api.PushItem{}
	}
	req.Items = items[:i]
	return nil
}

// grow makes room for one more item, keeping elements past len (encoding/json
// decodes into them if a later "items" array is longer). Once a few items are
// in, it sizes the slice from their average length so a batch of similar
// items costs two allocations.
func (d *decoder) grow(items []api.PushItem, arrayStart, pos int) []api.PushItem {
	n := cap(items)
	newCap := max(2*n, 8)
	if n > 0 {
		avg := max((pos-arrayStart)/n, 1)
		if estimate := n + (len(d.buf)-pos)/avg + 1; estimate > newCap {
			newCap = min(estimate, max(newCap, 1<<14))
		}
	}
	grown := make([]api.PushItem, n, newCap)
	copy(grown, items[:n])
	return grown[:len(items)]
}

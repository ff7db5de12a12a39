// Package pushdec decodes the bodies of POST /api/v1/push and of POST
// /api/v1/ack/batch in one pass over the bytes. encoding/json scans a push
// body three or four times (validation, decoding, and skipping each
// json.RawMessage payload), which dominated the push path's CPU, and its
// reflection-driven decoding of an ack batch was a sixth of the CPU of
// popping and acking; this decoder validates, unescapes and slices in one
// go while matching encoding/json's results exactly.
package pushdec

import "github.com/lethe-mq/lethe/client/api"

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
	d := decoder{buf: body, index: -1, array: "items", body: "push body",
		shared: 1<<slotQueue | 1<<slotPartition}
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

	array            string // the body's list, "items" or "acknowledgments", for paths
	body             string // what the body is, "push body", for errors about all of it
	index            int    // element of the list being decoded, or -1 outside it
	keyStart, keyEnd int    // raw key of the value being decoded, if keyEnd > keyStart

	// Most batches repeat some values in every element (the queue of a
	// push, the partition and lease of an ack): for the string slots in
	// shared, last holds the latest value so an equal one reuses it.
	shared    uint
	last      [maxSlots]string
	deepKinds []bool // skipValue's container kinds below depth 64
}

// request decodes the top-level object of a push.
func (d *decoder) request(req *api.PushRequest) error {
	return d.document(func(key []byte, escaped bool) error {
		if lookupField(key, escaped, requestFields) == fieldItems {
			return arrayField(d, &req.Items, "an array of items", d.item)
		}
		return d.skipValue(1)
	})
}

// document decodes the whole body, which must be one object, calling member
// for each of its members like object.
func (d *decoder) document(member func(key []byte, escaped bool) error) error {
	d.pos = skipSpace(d.buf, 0)
	if d.pos >= len(d.buf) || d.buf[d.pos] != '{' {
		return d.wrongType(d.pos, "a JSON object")
	}
	if err := d.object(member); err != nil {
		return err
	}
	if d.pos = skipSpace(d.buf, d.pos); d.pos < len(d.buf) {
		return d.invalidChar(d.pos, "after top-level value")
	}
	return nil
}

// elementObject decodes one element of an array of objects (items, acks),
// each member through member, and says whether it was an object: null
// leaves the element as it is, like encoding/json; anything else is refused.
func (d *decoder) elementObject(member func(key []byte, escaped bool) error) (bool, error) {
	if d.pos < len(d.buf) && d.buf[d.pos] == 'n' {
		pos, err := d.scanLiteral(d.pos)
		d.pos = pos
		return false, err
	}
	if d.pos >= len(d.buf) || d.buf[d.pos] != '{' {
		return false, d.wrongType(d.pos, "an object")
	}
	return true, d.object(member)
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

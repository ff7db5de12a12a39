package pushdec

import (
	"strings"
	"unicode/utf8"

	"github.com/lethe-mq/lethe/api"
)

// item decodes one element of the items array: an object, or null (which
// leaves the element as it is, like encoding/json).
func (d *decoder) item(it *api.PushItem) error {
	if d.pos < len(d.buf) && d.buf[d.pos] == 'n' {
		pos, err := d.scanLiteral(d.pos)
		d.pos = pos
		return err
	}
	if d.pos >= len(d.buf) || d.buf[d.pos] != '{' {
		return d.wrongType(d.pos, "an object")
	}
	var plain plainStrings
	err := d.object(func(key []byte, escaped bool) error {
		switch itemField(key, escaped) {
		case fieldQueue:
			return d.stringField(&it.Queue, &plain, slotQueue)
		case fieldPartition:
			return d.stringField(&it.Partition, &plain, slotPartition)
		case fieldPayload:
			start := d.pos
			if err := d.skipValue(3); err != nil {
				return err
			}
			it.Payload = d.buf[start:d.pos:d.pos]
			return nil
		case fieldTransactionID:
			return d.stringField(&it.TransactionID, &plain, slotTransactionID)
		case fieldTraceID:
			return d.stringField(&it.TraceID, &plain, slotTraceID)
		}
		return d.skipValue(3)
	})
	if err != nil {
		return err
	}
	d.flush(it, &plain)
	return nil
}

// Slots of an item's string fields in plainStrings.
const (
	slotQueue = iota
	slotPartition
	slotTransactionID
	slotTraceID
	slotCount
)

// plainStrings holds an item's string values that need no unescaping, as
// slices of the body, until the item's object closes: then they become
// strings sharing one allocation instead of one each.
type plainStrings struct {
	raw [slotCount][]byte
	set [slotCount]bool
}

// stringField decodes a string or null into dst; null leaves dst as it is.
// A plain string is parked in plain and stored by flush.
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
	case escaped || !utf8.Valid(raw):
		*dst = unquote(raw)
	case slot == slotQueue && d.lastQueue == string(raw):
		*dst = d.lastQueue // most batches go to one queue
	case slot == slotPartition && d.lastPartition == string(raw):
		*dst = d.lastPartition
	default:
		plain.raw[slot], plain.set[slot] = raw, true
	}
	return nil
}

// flush stores the parked strings of it.
func (d *decoder) flush(it *api.PushItem, plain *plainStrings) {
	dst := [slotCount]*string{&it.Queue, &it.Partition, &it.TransactionID, &it.TraceID}
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
		}
	}
	if plain.set[slotQueue] {
		d.lastQueue = it.Queue
	}
	if plain.set[slotPartition] {
		d.lastPartition = it.Partition
	}
}

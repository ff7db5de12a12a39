package pushdec

import "github.com/lethe-mq/lethe/client/api"

// item decodes one element of the items array: an object, or null (which
// leaves the element as it is, like encoding/json).
func (d *decoder) item(it *api.PushItem) error {
	var plain plainStrings
	isObject, err := d.elementObject(func(key []byte, escaped bool) error {
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
	if !isObject || err != nil {
		return err
	}
	d.flush(&[maxSlots]*string{
		slotQueue:         &it.Queue,
		slotPartition:     &it.Partition,
		slotTransactionID: &it.TransactionID,
		slotTraceID:       &it.TraceID,
	}, &plain)
	return nil
}

// Slots of an item's string fields in plainStrings.
const (
	slotQueue = iota
	slotPartition
	slotTransactionID
	slotTraceID
)

package pushdec

import "github.com/lethe-mq/lethe/client/api"

// DecodeAckBatch parses an ack batch body, {"consumerGroup":...,
// "acknowledgments":[{"transactionId":..., "partitionId":..., "leaseId":...,
// "status":..., "consumerGroup":..., "error":...}, ...]}, with the same
// outcome as json.Unmarshal(body, &api.AckBatchRequest{}) for every body it
// accepts: keys match exactly or case-insensitively, the last of duplicate
// keys wins, unknown keys are validated and ignored, null leaves a string
// empty, "acknowledgments": null or a missing list leaves it nil and []
// makes it empty but not nil.
//
// Like Decode it refuses what PostgreSQL cannot store anywhere in the body
// (the error has Unstorable set), and a body that is just null or not an
// object. Every error wraps ErrSyntax and is an *Error naming the byte
// offset and the field, e.g. "acknowledgments[3].leaseId must be a string,
// got number (at byte 57)".
//
// The strings of one ack share one allocation, and a partitionId, leaseId,
// status or consumerGroup equal to the one before it (as in the acks of one
// pop) reuses that string.
func DecodeAckBatch(body []byte) (api.AckBatchRequest, error) {
	d := decoder{buf: body, index: -1, array: "acknowledgments", body: "ack batch body",
		shared: 1<<ackSlotPartitionID | 1<<ackSlotLeaseID | 1<<ackSlotStatus | 1<<ackSlotConsumerGroup}
	var req api.AckBatchRequest
	if err := d.ackBatch(&req); err != nil {
		return api.AckBatchRequest{}, err
	}
	return req, nil
}

// Slots of an ack's string fields in plainStrings.
const (
	ackSlotTransactionID = iota
	ackSlotPartitionID
	ackSlotLeaseID
	ackSlotStatus
	ackSlotConsumerGroup
	ackSlotError
)

// ackBatch decodes the top-level object of an ack batch.
func (d *decoder) ackBatch(req *api.AckBatchRequest) error {
	var plain plainStrings
	err := d.document(func(key []byte, escaped bool) error {
		switch lookupField(key, escaped, ackBatchFields) {
		case fieldAcknowledgments:
			return arrayField(d, &req.Acknowledgments, "an array of acks", d.ack)
		case fieldConsumerGroup:
			return d.stringField(&req.ConsumerGroup, &plain, ackSlotConsumerGroup)
		}
		return d.skipValue(1)
	})
	if err != nil {
		return err
	}
	d.flush(&[maxSlots]*string{ackSlotConsumerGroup: &req.ConsumerGroup}, &plain)
	return nil
}

// ack decodes one element of the acknowledgments array: an object, or null
// (which leaves the element as it is, like encoding/json).
func (d *decoder) ack(a *api.AckRequest) error {
	var plain plainStrings
	isObject, err := d.elementObject(func(key []byte, escaped bool) error {
		switch ackField(key, escaped) {
		case fieldTransactionID:
			return d.stringField(&a.TransactionID, &plain, ackSlotTransactionID)
		case fieldPartitionID:
			return d.stringField(&a.PartitionID, &plain, ackSlotPartitionID)
		case fieldLeaseID:
			return d.stringField(&a.LeaseID, &plain, ackSlotLeaseID)
		case fieldStatus:
			return d.stringField(&a.Status, &plain, ackSlotStatus)
		case fieldConsumerGroup:
			return d.stringField(&a.ConsumerGroup, &plain, ackSlotConsumerGroup)
		case fieldError:
			return d.stringField(&a.Error, &plain, ackSlotError)
		}
		return d.skipValue(3)
	})
	if !isObject || err != nil {
		return err
	}
	d.flush(&[maxSlots]*string{
		ackSlotTransactionID: &a.TransactionID,
		ackSlotPartitionID:   &a.PartitionID,
		ackSlotLeaseID:       &a.LeaseID,
		ackSlotStatus:        &a.Status,
		ackSlotConsumerGroup: &a.ConsumerGroup,
		ackSlotError:         &a.Error,
	}, &plain)
	return nil
}

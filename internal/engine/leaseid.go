package engine

import (
	"crypto/rand"
	"encoding/binary"

	"github.com/google/uuid"
)

// Lease ids carry the queue they were drawn for, so that extending a lease
// finds its cursors through the queue's partitions and lethe.cursors needs
// no index on lease_id: pop and ack change lease_id on every call, and an
// index on it made every cursor update a non-HOT one (a new index entry per
// pop and per ack, and dead tuples piling up between vacuums).
//
// The id is a UUIDv8 (RFC 9562, vendor layout): bytes 0-5 are the queue id
// (big-endian), the remaining 74 bits outside the version and variant are
// random, which keeps an id unguessable. A queue id that does not fit 48
// bits gets a random (v4) id, which an extend finds by scanning cursors.
const leaseQueueBits = 48

// newLeaseID draws a lease id for a pop of queue queueID.
func newLeaseID(queueID int64) uuid.UUID {
	if queueID < 0 || queueID >= 1<<leaseQueueBits {
		return uuid.New()
	}
	var id uuid.UUID
	if _, err := rand.Read(id[6:]); err != nil {
		return uuid.New()
	}
	var q [8]byte
	binary.BigEndian.PutUint64(q[:], uint64(queueID))
	copy(id[:6], q[2:])
	id[6] = id[6]&0x0f | 0x80 // version 8
	id[8] = id[8]&0x3f | 0x80 // RFC 9562 variant
	return id
}

// leaseQueue answers the queue a lease id was drawn for, or false for an id
// of another layout (a random one, or one drawn before lease ids carried
// their queue).
func leaseQueue(id uuid.UUID) (int64, bool) {
	if id.Version() != 8 || id.Variant() != uuid.RFC4122 {
		return 0, false
	}
	var q [8]byte
	copy(q[2:], id[:6])
	return int64(binary.BigEndian.Uint64(q[:])), true
}

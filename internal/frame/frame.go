// Package frame encodes messages as length-prefixed frames. A segment row
// holds many frames back to back, which is what makes a message cost a
// fraction of a row.
//
// A frame is a 4-byte big-endian body length followed by the body:
//
//	version    1 byte: 1, or 2 when the payload is sealed
//	createdAt  8 bytes, big-endian Unix microseconds
//	txnID      uvarint length + bytes
//	traceID    uvarint length + bytes
//	producer   uvarint length + bytes
//	payload    the rest: raw JSON, or with version 2 the JSON sealed
//	           (encrypted and authenticated, package seal)
package frame

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// Versions: a frame's first body byte.
const (
	version1      = 1 // payload is raw JSON
	versionSealed = 2 // payload is sealed JSON
)

// headerLen is the length prefix in front of every body.
const headerLen = 4

// MaxBodyLen bounds one frame so a corrupt length cannot make the decoder
// allocate gigabytes.
const MaxBodyLen = 256 << 20

// ErrCorrupt reports bytes that are not a valid frame sequence.
var ErrCorrupt = errors.New("frame: corrupt segment")

// Message is what a frame carries.
type Message struct {
	CreatedAt   time.Time
	TxnID       string
	TraceID     string
	ProducerSub string
	Payload     []byte
	// Sealed says Payload is encrypted JSON (package seal), not JSON.
	Sealed bool
}

// Append encodes m as one frame at the end of dst.
func Append(dst []byte, m Message) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(bodyLen(m)))
	version := byte(version1)
	if m.Sealed {
		version = versionSealed
	}
	dst = append(dst, version)
	dst = binary.BigEndian.AppendUint64(dst, uint64(m.CreatedAt.UnixMicro()))
	dst = appendString(dst, m.TxnID)
	dst = appendString(dst, m.TraceID)
	dst = appendString(dst, m.ProducerSub)
	return append(dst, m.Payload...)
}

// Encode returns m as one frame.
func Encode(m Message) []byte { return Append(make([]byte, 0, Len(m)), m) }

// Len is the length of m's frame: what Append adds to dst.
func Len(m Message) int { return headerLen + bodyLen(m) }

func bodyLen(m Message) int {
	return 1 + 8 + varLen(m.TxnID) + varLen(m.TraceID) + varLen(m.ProducerSub) + len(m.Payload)
}

// Decode reads every frame of a segment. The returned messages alias seg.
func Decode(seg []byte) ([]Message, error) {
	var out []Message
	err := Walk(seg, func(_ int, m Message) bool {
		out = append(out, m)
		return true
	})
	return out, err
}

// Walk calls fn for each frame in order with its index, until fn returns
// false. Messages alias seg.
func Walk(seg []byte, fn func(i int, m Message) bool) error {
	for i := 0; len(seg) > 0; i++ {
		if len(seg) < headerLen {
			return fmt.Errorf("%w: %d trailing bytes", ErrCorrupt, len(seg))
		}
		n := binary.BigEndian.Uint32(seg)
		if n > MaxBodyLen || int(n) > len(seg)-headerLen {
			return fmt.Errorf("%w: frame %d claims %d bytes, %d left", ErrCorrupt, i, n, len(seg)-headerLen)
		}
		m, err := decodeBody(seg[headerLen : headerLen+int(n)])
		if err != nil {
			return fmt.Errorf("frame %d: %w", i, err)
		}
		if !fn(i, m) {
			return nil
		}
		seg = seg[headerLen+int(n):]
	}
	return nil
}

func decodeBody(b []byte) (Message, error) {
	var m Message
	if len(b) < 9 || b[0] != version1 && b[0] != versionSealed {
		return m, fmt.Errorf("%w: bad header", ErrCorrupt)
	}
	m.Sealed = b[0] == versionSealed
	m.CreatedAt = time.UnixMicro(int64(binary.BigEndian.Uint64(b[1:9]))).UTC()
	b = b[9:]
	var err error
	if m.TxnID, b, err = readString(b); err != nil {
		return m, err
	}
	if m.TraceID, b, err = readString(b); err != nil {
		return m, err
	}
	if m.ProducerSub, b, err = readString(b); err != nil {
		return m, err
	}
	m.Payload = b
	return m, nil
}

func varLen(s string) int { return uvarintLen(uint64(len(s))) + len(s) }

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

func readString(b []byte) (string, []byte, error) {
	n, k := binary.Uvarint(b)
	// A non-minimal varint would decode fine but re-encode differently, so
	// the fuzz round-trip property would not hold; reject it as corrupt.
	if k <= 0 || k != uvarintLen(n) || n > uint64(len(b)-k) {
		return "", nil, fmt.Errorf("%w: bad string length", ErrCorrupt)
	}
	return string(b[k : k+int(n)]), b[k+int(n):], nil
}

func uvarintLen(n uint64) int {
	var tmp [binary.MaxVarintLen64]byte
	return binary.PutUvarint(tmp[:], n)
}

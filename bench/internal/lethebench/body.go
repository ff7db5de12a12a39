package lethebench

import "strconv"

// bodies assembles push bodies from pre-encoded payloads by concatenation:
// no JSON encoding in the load loop.
type bodies struct {
	head     []byte // {"items":[{"queue":"Q","partition":"
	payloads [][]byte
	names    []string // partition names
	size     int      // upper bound of one item's bytes
}

func newBodies(queue string, partitions int, payloads [][]byte) *bodies {
	b := &bodies{head: []byte(`{"queue":` + strconv.Quote(queue) + `,"partition":"`), payloads: payloads}
	b.names = make([]string, partitions)
	for i := range b.names {
		b.names[i] = partitionName(i)
	}
	b.size = len(b.head) + 32 + len(`","payload":}`) + len(payloads[0]) + 1
	return b
}

func partitionName(i int) string { return "p" + strconv.Itoa(i) }

// make returns a body of n items for partition part, taking payloads from
// position seq of the pool on.
func (b *bodies) make(part, n, seq int) []byte {
	buf := make([]byte, 0, 16+n*b.size)
	buf = append(buf, `{"items":[`...)
	for i := range n {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, b.head...)
		buf = append(buf, b.names[part]...)
		buf = append(buf, `","payload":`...)
		buf = append(buf, b.payloads[(seq+i)%len(b.payloads)]...)
		buf = append(buf, '}')
	}
	return append(buf, "]}"...)
}

// prime creates every partition with one message each, a thousand
// partitions a request, so the measured pushes do not pay for creating
// them.
func (b *bodies) prime() [][]byte {
	var out [][]byte
	for from := 0; from < len(b.names); from += 1000 {
		to := min(from+1000, len(b.names))
		buf := []byte(`{"items":[`)
		for p := from; p < to; p++ {
			if p > from {
				buf = append(buf, ',')
			}
			buf = append(buf, b.head...)
			buf = append(buf, b.names[p]...)
			buf = append(buf, `","payload":`...)
			buf = append(buf, b.payloads[p%len(b.payloads)]...)
			buf = append(buf, '}')
		}
		out = append(out, append(buf, "]}"...))
	}
	return out
}

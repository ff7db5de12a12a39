// Package payload makes the bytes every system under test is given: JSON
// values of an exact size whose characters are random, so that neither
// TOAST's lz4 nor any other compressor can make one system's bytes cheaper
// than another's.
package payload

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"
)

// Sizes are the payload sizes every scenario runs with.
var Sizes = []int{100, 1024}

// Label names a size for tables: "100 B", "1 KiB".
func Label(size int) string {
	if size%1024 == 0 {
		return fmt.Sprintf("%d KiB", size/1024)
	}
	return fmt.Sprintf("%d B", size)
}

const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

// JSON returns a JSON string exactly size bytes long (size >= 2).
func JSON(rng *rand.Rand, size int) []byte {
	b := make([]byte, size)
	b[0], b[size-1] = '"', '"'
	fill(rng, b[1:size-1])
	return b
}

func fill(rng *rand.Rand, b []byte) {
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
	}
}

// Pool returns n distinct payloads of size bytes. Scenarios cycle through a
// pool instead of generating per message, so the load generator spends its
// CPU on the protocol, not on random numbers.
func Pool(seed uint64, n, size int) [][]byte {
	rng := rand.New(rand.NewPCG(seed, uint64(size)))
	out := make([][]byte, n)
	for i := range out {
		out[i] = JSON(rng, size)
	}
	return out
}

// Stamped returns a JSON object of size bytes carrying the send time, for
// end-to-end latency: {"t":<unix nanos>,"p":"<padding>"}.
func Stamped(at time.Time, size int, pad []byte) []byte {
	b := make([]byte, 0, size)
	b = append(b, `{"t":`...)
	b = strconv.AppendInt(b, at.UnixNano(), 10)
	b = append(b, `,"p":"`...)
	n := size - len(b) - 2
	for n > 0 {
		k := min(n, len(pad))
		b = append(b, pad[:k]...)
		n -= k
	}
	return append(b, `"}`...)
}

// StampOf reads the send time back out of a Stamped payload; ok is false
// for anything else.
func StampOf(p []byte) (time.Time, bool) {
	const prefix = `{"t":`
	if len(p) < len(prefix) || string(p[:len(prefix)]) != prefix {
		return time.Time{}, false
	}
	p = p[len(prefix):]
	end := 0
	for end < len(p) && p[end] >= '0' && p[end] <= '9' {
		end++
	}
	n, err := strconv.ParseInt(string(p[:end]), 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(0, n), true
}

// Padding returns random characters to fill Stamped payloads.
func Padding(seed uint64, n int) []byte {
	b := make([]byte, n)
	fill(rand.New(rand.NewPCG(seed, 7)), b)
	return b
}

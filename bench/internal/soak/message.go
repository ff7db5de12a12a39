package soak

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"time"
)

// padAlphabet has 64 characters: 6 bits of each random byte end up in the
// payload, which an LZ compressor (TOAST's lz4 or pglz) cannot shrink.
const padAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

// stamped returns a JSON object of exactly size bytes carrying the send
// time and the message's sequence number in its queue, padded with fresh
// random characters: {"t":<unix nanos>,"s":<seq>,"p":"<random>"}. Every
// message is padded differently, so a segment of many messages does not
// compress either.
func stamped(rng *rand.Rand, at time.Time, seq int64, size int) []byte {
	b := make([]byte, 0, size)
	b = append(b, `{"t":`...)
	b = strconv.AppendInt(b, at.UnixNano(), 10)
	b = append(b, `,"s":`...)
	b = strconv.AppendInt(b, seq, 10)
	b = append(b, `,"p":"`...)
	for n := size - len(b) - 2; n > 0; {
		r := rng.Uint64()
		for k := 0; k < 10 && n > 0; k, n = k+1, n-1 {
			b = append(b, padAlphabet[r&63])
			r >>= 6
		}
	}
	return append(b, `"}`...)
}

// stampOf reads the send time and the sequence number back; ok is false
// for anything stamped did not make. lethe hands a payload back as it was
// pushed, so the fast path reads the two numbers where stamped put them;
// JSON decoding is the fallback should the server reformat it.
func stampOf(p []byte) (at time.Time, seq int64, ok bool) {
	if t, rest, ok := numberAfter(p, `{"t":`); ok {
		if seq, _, ok := numberAfter(rest, `,"s":`); ok {
			return time.Unix(0, t), seq, true
		}
	}
	var v struct {
		T *int64 `json:"t"`
		S *int64 `json:"s"`
	}
	if json.Unmarshal(p, &v) != nil || v.T == nil || v.S == nil {
		return time.Time{}, 0, false
	}
	return time.Unix(0, *v.T), *v.S, true
}

func numberAfter(p []byte, prefix string) (int64, []byte, bool) {
	if !bytes.HasPrefix(p, []byte(prefix)) {
		return 0, p, false
	}
	p = p[len(prefix):]
	end := 0
	for end < len(p) && p[end] >= '0' && p[end] <= '9' {
		end++
	}
	n, err := strconv.ParseInt(string(p[:end]), 10, 64)
	return n, p[end:], err == nil
}

// pushBody is one push request: n stamped messages for one partition of
// queue, sequence numbers first..first+n-1.
func pushBody(rng *rand.Rand, queue, partition string, first int64, n, size int, at time.Time) []byte {
	head := `{"queue":` + strconv.Quote(queue) + `,"partition":` + strconv.Quote(partition) + `,"payload":`
	buf := make([]byte, 0, 16+n*(len(head)+size+2))
	buf = append(buf, `{"items":[`...)
	for i := range n {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, head...)
		buf = append(buf, stamped(rng, at, first+int64(i), size)...)
		buf = append(buf, '}')
	}
	return append(buf, "]}"...)
}

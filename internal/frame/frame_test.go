package frame

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 29, 23, 0, 0, 123456000, time.UTC)
	in := []Message{
		{CreatedAt: at, TxnID: "tx-1", TraceID: "tr", ProducerSub: "svc", Payload: []byte(`{"a":1}`)},
		{CreatedAt: at.Add(time.Second), TxnID: "tx-2", Payload: []byte(`null`)},
		{CreatedAt: at, TxnID: "", Payload: nil},
		{CreatedAt: at, TxnID: "tx-3", Payload: []byte{0, 0xff, 7}, Sealed: true},
	}
	var seg []byte
	for i, m := range in {
		n := len(seg)
		seg = Append(seg, m)
		if len(seg)-n != Len(m) { // segments are sized by Len before they are encoded
			t.Errorf("frame %d: Append wrote %d bytes, Len says %d", i, len(seg)-n, Len(m))
		}
	}
	out, err := Decode(seg)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	if len(out) != len(in) {
		t.Fatalf("got %d frames, want %d", len(out), len(in))
	}
	for i := range in {
		if !out[i].CreatedAt.Equal(in[i].CreatedAt) || out[i].TxnID != in[i].TxnID ||
			out[i].TraceID != in[i].TraceID || out[i].ProducerSub != in[i].ProducerSub ||
			!bytes.Equal(out[i].Payload, in[i].Payload) || out[i].Sealed != in[i].Sealed {
			t.Errorf("frame %d: got %+v, want %+v", i, out[i], in[i])
		}
	}
}

func TestWalkStops(t *testing.T) {
	t.Parallel()
	seg := Append(Append(nil, Message{TxnID: "a"}), Message{TxnID: "b"})
	seen := 0
	if err := Walk(seg, func(int, Message) bool { seen++; return false }); err != nil {
		t.Fatal(err)
	}
	if seen != 1 {
		t.Fatalf("walk visited %d frames after stop, want 1", seen)
	}
}

func TestCorrupt(t *testing.T) {
	t.Parallel()
	good := Encode(Message{TxnID: "abc", Payload: []byte(`{}`)})
	cases := map[string][]byte{
		"truncated body":  good[:len(good)-3],
		"trailing bytes":  append(append([]byte{}, good...), 0, 1),
		"huge length":     {0xff, 0xff, 0xff, 0xff, 1},
		"bad version":     append([]byte{0, 0, 0, 9}, 7, 0, 0, 0, 0, 0, 0, 0, 0),
		"string past end": append([]byte{0, 0, 0, 10}, 1, 0, 0, 0, 0, 0, 0, 0, 0, 50),
	}
	for name, seg := range cases {
		if _, err := Decode(seg); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: got %v, want ErrCorrupt", name, err)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(Encode(Message{TxnID: "x", Payload: []byte(`{"k":"v"}`)}))
	f.Add(Encode(Message{TxnID: "s", Payload: []byte{1, 2, 3}, Sealed: true}))
	f.Add([]byte{0, 0, 0, 1, 1})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, seg []byte) {
		msgs, err := Decode(seg)
		if err != nil {
			return
		}
		// Whatever decodes must re-encode to the same bytes.
		var again []byte
		for _, m := range msgs {
			again = Append(again, m)
		}
		if !bytes.Equal(again, seg) {
			t.Fatalf("re-encoding differs:\n in  %x\n out %x", seg, again)
		}
	})
}

package payload

import (
	"encoding/json"
	"testing"
	"time"
)

func TestJSONIsValidAndExact(t *testing.T) {
	for _, size := range Sizes {
		for _, p := range Pool(1, 4, size) {
			if len(p) != size || !json.Valid(p) {
				t.Fatalf("payload of size %d: got %d bytes, valid=%v", size, len(p), json.Valid(p))
			}
		}
	}
}

func TestStampRoundTrip(t *testing.T) {
	at := time.Unix(1_700_000_000, 123456789)
	for _, size := range Sizes {
		p := Stamped(at, size, Padding(1, 64))
		if len(p) != size || !json.Valid(p) {
			t.Fatalf("stamped payload of size %d: got %d bytes, valid=%v: %s", size, len(p), json.Valid(p), p)
		}
		got, ok := StampOf(p)
		if !ok || !got.Equal(at) {
			t.Fatalf("StampOf = %v, %v; want %v", got, ok, at)
		}
	}
	if _, ok := StampOf([]byte(`"x"`)); ok {
		t.Fatal("StampOf accepted a payload without a stamp")
	}
}

package seal

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
)

const (
	keyA = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	keyB = "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
)

func mustKeys(t testing.TB, current, previous string) *Keys {
	t.Helper()
	ks, err := ParseKeys(current, previous)
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

func TestSealOpenRoundTrip(t *testing.T) {
	t.Parallel()
	ks := mustKeys(t, keyA, "")
	plain := []byte(`{"card":"4111 1111 1111 1111"}`)
	a, err := ks.Seal(nil, plain)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := ks.Seal(nil, plain)
	if bytes.Equal(a, b) {
		t.Error("two seals of one payload are equal: the nonce must be fresh")
	}
	if bytes.Contains(a, []byte("4111")) || len(a) != len(plain)+Overhead || PlainLen(a) != len(plain) {
		t.Errorf("sealed %x: holds the plain text or has the wrong length", a)
	}
	got, err := ks.Open(a)
	if err != nil || !bytes.Equal(got, plain) {
		t.Errorf("Open = %q, %v", got, err)
	}
}

func TestOpenRefusesTamperingAndUnknownKeys(t *testing.T) {
	t.Parallel()
	ks := mustKeys(t, keyA, "")
	sealed, _ := ks.Seal(nil, []byte(`"secret"`))
	for i := range sealed {
		bad := bytes.Clone(sealed)
		bad[i] ^= 1
		if _, err := ks.Open(bad); err == nil {
			t.Errorf("flipping byte %d was not noticed", i)
		}
	}
	if _, err := ks.Open(sealed[:Overhead-1]); !errors.Is(err, ErrDamaged) {
		t.Errorf("short payload: %v, want ErrDamaged", err)
	}
	other := mustKeys(t, keyB, "")
	if _, err := other.Open(sealed); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("other key: %v, want ErrUnknownKey", err)
	}
	var none *Keys
	if _, err := none.Open(sealed); !errors.Is(err, ErrNoKey) {
		t.Errorf("no keys: %v, want ErrNoKey", err)
	}
	if _, err := none.Seal(nil, []byte("1")); !errors.Is(err, ErrNoKey) || none.On() {
		t.Errorf("no keys sealed: %v", err)
	}
}

func TestRotationOpensWithThePreviousKey(t *testing.T) {
	t.Parallel()
	old := mustKeys(t, keyA, "")
	sealed, _ := old.Seal(nil, []byte(`1`))
	rotated := mustKeys(t, keyB, " "+strings.ToUpper(keyA)+" ")
	if got, err := rotated.Open(sealed); err != nil || string(got) != "1" {
		t.Errorf("rotated keys open the old payload: %q, %v", got, err)
	}
	fresh, _ := rotated.Seal(nil, []byte(`2`))
	if _, err := old.Open(fresh); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("the new key seals (old keys cannot open it): %v", err)
	}
	if rotated.KeyID() == old.KeyID() || len(rotated.KeyID()) != 8 {
		t.Errorf("key ids %q %q", rotated.KeyID(), old.KeyID())
	}
}

func TestParseKeysRefusesBadKeys(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ current, previous string }{
		{"abc", ""}, {keyA[:62], ""}, {keyA + "00", ""}, {strings.Replace(keyA, "0", "g", 1), ""},
		{keyA, "nothex"}, {"", keyA},
	} {
		if _, err := ParseKeys(c.current, c.previous); err == nil {
			t.Errorf("ParseKeys(%q, %q) accepted", c.current, c.previous)
		}
	}
	if ks, err := ParseKeys("", ""); ks != nil || err != nil {
		t.Errorf("no key: %v, %v; want nil, nil", ks, err)
	}
}

func FuzzOpen(f *testing.F) {
	ks := mustKeys(f, keyA, "")
	good, _ := ks.Seal(nil, []byte(`{"a":1}`))
	f.Add(good)
	f.Add([]byte{})
	f.Add([]byte{1, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		plain, err := ks.Open(b)
		if err == nil && string(plain) != `{"a":1}` {
			// Only what this key sealed opens (the seed, sealed again in
			// each fuzz worker); the fuzzer cannot forge another.
			t.Fatalf("Open accepted %x as %q", b, plain)
		}
	})
}

// BenchmarkSealOpen is the CPU cost of encryption per payload, without
// the database: go test -run XXX -bench . ./internal/seal/
func BenchmarkSealOpen(b *testing.B) {
	ks := mustKeys(b, keyA, "")
	for _, size := range []int{100, 1024, 64 << 10} {
		plain := bytes.Repeat([]byte("x"), size)
		sealed, _ := ks.Seal(nil, plain)
		b.Run(fmt.Sprintf("seal-%d", size), func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				if _, err := ks.Seal(nil, plain); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("open-%d", size), func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				if _, err := ks.Open(sealed); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

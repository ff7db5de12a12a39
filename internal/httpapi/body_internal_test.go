package httpapi

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// readAll returns every byte whatever the declared length says, and
// reads a body of the declared length into one allocation.
func TestReadAllReadsWhatComes(t *testing.T) {
	body := strings.Repeat("0123456789", 10_000)
	for _, declared := range []int64{-1, 0, 1, 512, int64(len(body)) - 1, int64(len(body)), int64(len(body)) + 7, presizeMax} {
		got, err := readAll(iotest.HalfReader(strings.NewReader(body)), declared)
		if err != nil || string(got) != body {
			t.Errorf("declared %d: read %d bytes (%v), want %d", declared, len(got), err, len(body))
		}
	}
	broken := errors.New("connection reset")
	if _, err := readAll(iotest.ErrReader(broken), 10); !errors.Is(err, broken) {
		t.Errorf("a failing body answered %v, want its error", err)
	}
	src := []byte(body)
	r := bytes.NewReader(src)
	allocs := testing.AllocsPerRun(20, func() {
		r.Reset(src)
		if _, err := readAll(r, int64(len(src))); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 1 {
		t.Errorf("reading a declared 100 KB body made %.0f allocations, want 1", allocs)
	}
	if n := testing.AllocsPerRun(5, func() { r.Reset(src); _, _ = io.ReadAll(r) }); n <= 1 {
		t.Fatalf("io.ReadAll made %.0f allocations: the check above cannot fail", n)
	}
}

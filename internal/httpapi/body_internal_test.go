package httpapi

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// readAll returns every byte whatever the declared length says, reads a
// body of a declared length up to presizeFirst into one allocation, and a
// larger one in few.
func TestReadAllReadsWhatComes(t *testing.T) {
	body := strings.Repeat("0123456789", 10_000)
	for _, declared := range []int64{-1, 0, 1, 512, int64(len(body)) - 1, int64(len(body)), int64(len(body)) + 7, presizeFirst} {
		got, err := readAll(iotest.HalfReader(strings.NewReader(body)), declared, nil)
		if err != nil || string(got) != body {
			t.Errorf("declared %d: read %d bytes (%v), want %d", declared, len(got), err, len(body))
		}
	}
	broken := errors.New("connection reset")
	if _, err := readAll(iotest.ErrReader(broken), 10, nil); !errors.Is(err, broken) {
		t.Errorf("a failing body answered %v, want its error", err)
	}
	for _, tc := range []struct {
		size   int
		allocs float64
	}{{presizeFirst - 1, 1}, {100_000, 2}, {1 << 20, 4}} {
		src := bytes.Repeat([]byte("x"), tc.size)
		r := bytes.NewReader(src)
		allocs := testing.AllocsPerRun(20, func() {
			r.Reset(src)
			if _, err := readAll(r, int64(len(src)), nil); err != nil {
				t.Fatal(err)
			}
		})
		if allocs > tc.allocs {
			t.Errorf("reading a declared body of %d bytes made %.0f allocations, want at most %.0f", tc.size, allocs, tc.allocs)
		}
		if n := testing.AllocsPerRun(5, func() { r.Reset(src); _, _ = io.ReadAll(r) }); n <= tc.allocs {
			t.Fatalf("io.ReadAll of %d bytes made %.0f allocations: the check above cannot fail", tc.size, n)
		}
	}
}

// What readAll charges is the buffer it holds, as it grows with what has
// arrived: at most four times the bytes read (and the first 64 KiB), with
// or without a declared length; a refused charge ends the read.
func TestReadAllChargesAsBytesArrive(t *testing.T) {
	for _, tc := range []struct {
		size     int
		declared int64
	}{{10, -1}, {100_000, -1}, {3 << 20, -1}, {10, 10}, {100_000, 100_000}, {3 << 20, 3 << 20}, {3 << 20, 64 << 20}} {
		src := bytes.Repeat([]byte("y"), tc.size)
		cr := &countingReader{r: iotest.OneByteReader(bytes.NewReader(src))}
		var charged int64
		got, err := readAll(cr, tc.declared, func(n int64) error {
			charged += n
			if limit := max(4*cr.n, presizeFirst); charged > limit {
				t.Errorf("size %d declared %d: charged %d after %d bytes read, over %d", tc.size, tc.declared, charged, cr.n, limit)
			}
			return nil
		})
		if err != nil || len(got) != tc.size {
			t.Fatalf("size %d declared %d: read %d (%v)", tc.size, tc.declared, len(got), err)
		}
		if charged != int64(cap(got)) {
			t.Errorf("size %d declared %d: charged %d for a buffer of %d", tc.size, tc.declared, charged, cap(got))
		}
	}
	refused := errors.New("no room")
	src := bytes.Repeat([]byte("z"), 1<<20)
	if _, err := readAll(bytes.NewReader(src), -1, func(n int64) error {
		if n > 8<<10 {
			return refused
		}
		return nil
	}); !errors.Is(err, refused) {
		t.Errorf("a refused charge answered %v, want its error", err)
	}
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

package store

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/internal/frame"
)

// batchMessages are a push's messages with minted ones, producers' ids and
// an id repeated within the batch.
func batchMessages() (msgs []frame.Message, minted []bool) {
	t0 := time.Date(2030, 1, 2, 0, 0, 0, 0, time.UTC)
	for i, id := range []string{"", "a", "b", "", "a", "c"} {
		msgs = append(msgs, frame.Message{CreatedAt: t0.Add(time.Duration(5-i) * time.Second), TxnID: id, TraceID: "t",
			Payload: []byte(`{"n":` + strings.Repeat("7", i+1) + `}`)})
		minted = append(minted, id == "")
	}
	return msgs, minted
}

// AddMessage builds the batch that Add and AddMinted build from the same
// messages encoded first: the same segment bytes, ids, repeats and times.
func TestAddMessageBuildsWhatAddBuilds(t *testing.T) {
	msgs, minted := batchMessages()
	encoded, direct := NewBatch(len(msgs), 0), NewBatch(len(msgs), 0)
	for i, m := range msgs {
		var hash int64
		if !minted[i] {
			hash = TxnHash(m.TxnID)
			encoded.Add(hash, frame.Encode(m), m.CreatedAt)
		} else {
			encoded.AddMinted(frame.Encode(m), m.CreatedAt)
		}
		direct.AddMessage(hash, m, minted[i])
	}
	if !reflect.DeepEqual(encoded, direct) {
		t.Errorf("AddMessage built\n%+v\nwant what Add built\n%+v", direct, encoded)
	}
	if direct.Len() != 6 || len(direct.lens) != 5 {
		t.Errorf("%d frames added, %d stored; want 6 added and 5 stored (one id repeats)", direct.Len(), len(direct.lens))
	}
}

// A batch sized by frame.Len copies each payload once, into the segment:
// its allocations do not grow with the frames added.
func TestBatchCopiesEachPayloadOnce(t *testing.T) {
	m := frame.Message{CreatedAt: time.Unix(0, 0), Payload: []byte(strings.Repeat("x", 1024))}
	for _, n := range []int{1, 100} {
		allocs := testing.AllocsPerRun(20, func() {
			b := NewBatch(n, n*frame.Len(m))
			for range n {
				b.AddMessage(0, m, true)
			}
			if len(b.blob) != n*frame.Len(m) {
				t.Fatalf("segment of %d bytes, want %d", len(b.blob), n*frame.Len(m))
			}
		})
		if allocs > 5 {
			t.Errorf("a batch of %d minted 1 KiB messages made %.0f allocations, want at most 5 whatever the count", n, allocs)
		}
	}
}

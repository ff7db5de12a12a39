package engine_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/frame"
	"github.com/lethe-mq/lethe/internal/store"
	"github.com/lethe-mq/lethe/internal/store/storetest"
	"github.com/lethe-mq/lethe/internal/testserver"
)

// Over real HTTP: a pop of a queue holding a poisoned partition answers 200
// with one valid JSON document holding the other messages, for every group.
func TestCoreCorruptMessagesOverHTTP(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	ctx := context.Background()
	res, err := srv.Engine.Push(ctx, []api.PushItem{
		{Queue: "poison", Partition: "bad", Payload: json.RawMessage(`"b0"`)},
		{Queue: "poison", Partition: "good", Payload: json.RawMessage(`"g0"`)},
	}, "")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	seg := storetest.Segment{Partition: uuid.MustParse(res[0].PartitionID), Base: 1, Count: 3, FirstAt: now, LastAt: now}
	seg.Frames = slices.Concat(
		frame.Encode(frame.Message{CreatedAt: seg.FirstAt, TxnID: nulTxn, Payload: []byte(`"b1"`)}),
		frame.Encode(frame.Message{CreatedAt: seg.FirstAt, TxnID: "x", Payload: []byte(`{not json`)}),
		[]byte{0, 0, 0, 1})
	seg.Hashes = []int64{store.TxnHash(nulTxn), store.TxnHash("x"), store.TxnHash("y")}
	if err := storetest.Write(ctx, srv.Pool, seg); err != nil {
		t.Fatal(err)
	}
	for _, group := range []string{"", "g1", "g2"} {
		url := srv.URL + "/api/v1/pop/queue/poison?batch=10&partitions=2&wait=false"
		if group != "" {
			url += "&consumerGroup=" + group
		}
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var pop api.PopResponse
		if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &pop) != nil {
			t.Fatalf("group %q: pop = %d %s, want 200 and JSON", group, resp.StatusCode, body)
		}
		var got []string
		for _, m := range pop.Messages {
			got = append(got, string(m.Data))
		}
		slices.Sort(got)
		if strings.Join(got, " ") != `"b0" "b1" "g0"` {
			t.Errorf("group %q popped %v, want every readable message", group, got)
		}
	}
}

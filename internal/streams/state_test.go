package streams_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/apierr"
	"github.com/lethe-mq/lethe/internal/streams"
)

// writeState commits a cycle with no ack that upserts key -> value.
func writeState(t *testing.T, b *bundle, query, partition string, kv map[string]string) {
	t.Helper()
	var ops []api.StreamStateOp
	for k, v := range kv {
		ops = append(ops, api.StreamStateOp{Type: "upsert", Key: k, Value: json.RawMessage(v)})
	}
	var out api.StreamCycleResponse
	b.must(t, http.StatusOK, http.MethodPost, "/streams/v1/cycle",
		api.StreamCycleRequest{QueryID: query, PartitionID: partition, StateOps: ops}, &out)
	if !out.Success {
		t.Fatalf("state cycle failed: %s", out.Error)
	}
}

func keysOf(t *testing.T, b *bundle, req api.StreamStateRequest) []string {
	t.Helper()
	var st api.StreamStateResponse
	b.must(t, http.StatusOK, http.MethodPost, "/streams/v1/state/get", req, &st)
	var keys []string
	for _, r := range st.Rows {
		keys = append(keys, r.Key)
	}
	return keys
}

// State is per (query, partition); reads filter by keys, by a plain prefix
// (LIKE's _ and % are not patterns) and by windowEnd, ANDed, in key order.
// Keys may hold U+001F, as the SDK's do.
func TestStateReadsFilterByKeysPrefixAndRipeness(t *testing.T) {
	t.Parallel()
	b := setup(t, 0)
	query := registered(t, b, "windows")
	p1, p2 := partitionID(t, b, "src", "p1"), partitionID(t, b, "src", "p2")
	writeState(t, b, query, p1, map[string]string{
		"tumb\x1fw1": `{"windowEnd": 1000, "acc": 1}`,
		"tumb\x1fw2": `{"windowEnd": 2000.5, "acc": 2}`,
		"tumb\x1fw3": `{"windowEnd": "later"}`,
		"tumbXw4":    `{"windowEnd": 10}`,
		"t_mb\x1fw5": `{"windowEnd": 10}`,
		"__wm__":     `{"eventTimeMs": 5}`,
	})
	writeState(t, b, query, p2, map[string]string{"tumb\x1fother": `{"windowEnd": 1}`})

	all := keysOf(t, b, api.StreamStateRequest{QueryID: query, PartitionID: p1})
	want := []string{"__wm__", "t_mb\x1fw5", "tumb\x1fw1", "tumb\x1fw2", "tumb\x1fw3", "tumbXw4"}
	if !slices.Equal(all, want) {
		t.Fatalf("all keys of p1: %q, want %q (byte order, p1 only)", all, want)
	}
	for _, c := range []struct {
		name string
		req  api.StreamStateRequest
		want []string
	}{
		{"keys", api.StreamStateRequest{Keys: []string{"__wm__", "missing"}}, []string{"__wm__"}},
		{"prefix", api.StreamStateRequest{KeyPrefix: "t_mb"}, []string{"t_mb\x1fw5"}},
		{"prefix and ripe", api.StreamStateRequest{KeyPrefix: "tumb\x1f", RipeAtOrBefore: json.RawMessage(`2000`)},
			[]string{"tumb\x1fw1"}},
		{"ripe fraction", api.StreamStateRequest{KeyPrefix: "tumb\x1f", RipeAtOrBefore: json.RawMessage(`2000.5`)},
			[]string{"tumb\x1fw1", "tumb\x1fw2"}},
		{"null ripe", api.StreamStateRequest{Keys: []string{"tumb\x1fw3"}, RipeAtOrBefore: json.RawMessage(`null`)},
			[]string{"tumb\x1fw3"}},
	} {
		c.req.QueryID, c.req.PartitionID = query, p1
		if got := keysOf(t, b, c.req); !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// A state read that would answer more than its bound is refused with a
// 400 naming keys, never answered cut: the SDK reads all of a partition's
// state each cycle and would take a part for the whole. Naming keys reads
// it in parts. Fails when a read past the bound answers, or when the
// bound refuses reads under it.
func TestStateReadOverItsBoundIsRefused(t *testing.T) {
	t.Parallel()
	b := setup(t, 0)
	query := registered(t, b, "big")
	p := partitionID(t, b, "src", "p1")
	value := `{"v":"` + strings.Repeat("x", 50) + `"}` // 58 bytes
	writeState(t, b, query, p, map[string]string{"a": value, "b": value, "c": value})
	if all := keysOf(t, b, api.StreamStateRequest{QueryID: query, PartitionID: p}); len(all) != 3 {
		t.Fatalf("read under the default bound: %q, want 3 keys", all)
	}
	small := streams.New(streams.Config{Engine: b.srv.Engine, StateReadMaxBytes: 100})
	_, err := small.State(context.Background(), api.StreamStateRequest{QueryID: query, PartitionID: p})
	if apierr.KindOf(err) != apierr.Invalid || apierr.FieldOf(err) != "keys" {
		t.Errorf("read of 177 bytes under a bound of 100: %v, want invalid naming keys", err)
	}
	part, err := small.State(context.Background(), api.StreamStateRequest{QueryID: query, PartitionID: p, Keys: []string{"a"}})
	if err != nil || len(part.Rows) != 1 {
		t.Errorf("read of one key under the bound: %+v, %v; want its row", part, err)
	}
}

package traces_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/clock"
	"github.com/lethe-mq/lethe/internal/config"
	"github.com/lethe-mq/lethe/internal/seal"
	"github.com/lethe-mq/lethe/internal/testserver"
	"github.com/lethe-mq/lethe/internal/traces"
)

// Traces by name show an encrypted queue's message payload opened, as a
// pop would deliver it; a replica without the key shows null rather than
// the sealed bytes.
func TestTracesByNameOpenSealedPayloads(t *testing.T) {
	t.Parallel()
	keys, err := seal.ParseKeys("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "")
	if err != nil {
		t.Fatal(err)
	}
	clk := clock.NewFake(t0)
	b := &bundle{srv: testserver.Start(t, testserver.Options{Clock: clk, Config: func(c *config.Server) { c.EncryptionKeys = keys }}), clk: clk}
	bare := &bundle{srv: testserver.Start(t, testserver.Options{Clock: clk, DatabaseURL: b.srv.DatabaseURL}), clk: clk}
	if got := b.call(t, http.MethodPost, "/api/v1/configure", `{"queue":"vault","options":{"encryptionEnabled":true}}`, nil); got != http.StatusOK {
		t.Fatalf("configure answered %d", got)
	}
	pid := b.pushed(t, "vault", "t1", `{"secret":1}`)
	if got := b.call(t, http.MethodPost, "/api/v1/traces", map[string]any{"transactionId": "t1", "partitionId": pid,
		"data": 1, "traceNames": "sealed"}, nil); got != http.StatusCreated {
		t.Fatalf("record answered %d", got)
	}
	for _, c := range []struct {
		who  *bundle
		want string
	}{{b, `{"secret":1}`}, {bare, `null`}} {
		var named api.TracesByName
		c.who.call(t, http.MethodGet, "/api/v1/traces/by-name/sealed", nil, &named)
		if len(named.Traces) != 1 || string(named.Traces[0].MessagePayload) != c.want {
			t.Errorf("traces by name: %+v, want message_payload %s", named.Traces, c.want)
		}
	}
}

// A page of traces by name is bounded in the message payloads it holds:
// once they reach the bound, the later traces show null and the page says
// payloadsTruncated. Fails when every payload is filled in regardless, or
// when a page cut by the bound is not marked.
func TestTracesByNameBoundTheirPayloads(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, txn := range []string{"t1", "t2", "t3"} {
		pid := b.pushed(t, "big", txn, `"`+strings.Repeat("x", 98)+`"`) // 100 bytes
		if got := b.call(t, http.MethodPost, "/api/v1/traces", map[string]any{"transactionId": txn, "partitionId": pid,
			"data": 1, "traceNames": "bounded"}, nil); got != http.StatusCreated {
			t.Fatalf("record answered %d", got)
		}
	}
	for _, c := range []struct {
		bound, filled int
		truncated     bool
	}{{0, 3, false}, {150, 2, true}, {50, 1, true}} {
		svc := traces.New(traces.Config{Pool: b.srv.Pool, PagePayloadBytes: c.bound})
		named, err := svc.ByName(context.Background(), "bounded", api.Pagination{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		filled := 0
		for _, tr := range named.Traces {
			if string(tr.MessagePayload) != "null" {
				filled++
			}
		}
		if len(named.Traces) != 3 || filled != c.filled || named.PayloadsTruncated != c.truncated {
			t.Errorf("bound %d: %d traces, %d payloads, truncated %v; want 3, %d, %v",
				c.bound, len(named.Traces), filled, named.PayloadsTruncated, c.filled, c.truncated)
		}
	}
}

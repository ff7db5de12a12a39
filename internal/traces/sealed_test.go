package traces_test

import (
	"net/http"
	"testing"

	"github.com/lethe-mq/lethe/api"
	"github.com/lethe-mq/lethe/internal/clock"
	"github.com/lethe-mq/lethe/internal/config"
	"github.com/lethe-mq/lethe/internal/seal"
	"github.com/lethe-mq/lethe/internal/testserver"
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

package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/httpapi"
)

// coreBadRequest is one malformed call and the status it must get.
type coreBadRequest struct {
	name, method, path, body string
	status                   int
}

func coreBadInputs() []coreBadRequest {
	long := strings.Repeat("n", 600)
	push := func(name, body string) coreBadRequest {
		return coreBadRequest{name, "POST", "/api/v1/push", body, http.StatusBadRequest}
	}
	pop := func(name, query string) coreBadRequest {
		return coreBadRequest{name, "GET", "/api/v1/pop/queue/ok" + query, "", http.StatusBadRequest}
	}
	post := func(name, path, body string) coreBadRequest {
		return coreBadRequest{name, "POST", path, body, http.StatusBadRequest}
	}
	return []coreBadRequest{
		push("push empty body", ""),
		push("push truncated", `{"items":[{"queue":"ok"`),
		push("push not JSON", `items=1`),
		push("push array body", `[{"queue":"ok"}]`),
		push("push string body", `"hello"`),
		push("push no items", `{}`),
		push("push null items", `{"items":null}`),
		push("push items not array", `{"items":"x"}`),
		push("push queue not string", `{"items":[{"queue":5}]}`),
		push("push missing queue", `{"items":[{"payload":1}]}`),
		push("push partition not string", `{"items":[{"queue":"ok","partition":7}]}`),
		push("push bad payload", `{"items":[{"queue":"ok","payload":{"a":}}]}`),
		push("push txn id not string", `{"items":[{"queue":"ok","transactionId":123}]}`),
		push("push two values", `{"items":[{"queue":"ok"}]} {"items":[{"queue":"ok"}]}`),
		push("push trailing garbage", `{"items":[{"queue":"ok"}]} x`),
		push("push control char queue", `{"items":[{"queue":"o\u0001k"}]}`),
		push("push long queue", `{"items":[{"queue":"`+long+`"}]}`),
		push("push long partition", `{"items":[{"queue":"ok","partition":"`+long+`"}]}`),
		push("push second item bad", `{"items":[{"queue":"ok","payload":1},{"queue":""}]}`),
		push("push NUL transaction id", `{"items":[{"queue":"ok","transactionId":"a\u0000b"}]}`),
		push("push lone surrogate queue", `{"items":[{"queue":"\ud800"}]}`),
		push("push non-UTF-8 queue", "{\"items\":[{\"queue\":\"o\xffk\"}]}"),
		push("push blank queue", `{"items":[{"queue":"   "}]}`),
		push("push bidi queue", `{"items":[{"queue":"ok\u202e"}]}`),
		push("push huge number", `{"items":[{"queue":"ok","payload":1e999999}]}`),
		pop("pop batch -1", "?batch=-1"),
		pop("pop batch huge", "?batch=999999"),
		pop("pop batch word", "?batch=ten"),
		pop("pop timeout word", "?wait=true&timeout=abc"),
		pop("pop timeout negative", "?wait=true&timeout=-5"),
		pop("pop timeout huge", "?wait=true&timeout=999999999"),
		pop("pop wait maybe", "?wait=maybe"),
		pop("pop autoAck 2", "?autoAck=2"),
		pop("pop partitions -1", "?partitions=-1"),
		pop("pop partitions 101", "?partitions=101"),
		pop("pop partitions word", "?partitions=all"),
		pop("pop subscriptionFrom", "?consumerGroup=g&subscriptionFrom=yesterday"),
		pop("pop long group", "?consumerGroup="+long),
		{"pop control char queue", "GET", "/api/v1/pop/queue/o%01k", "", http.StatusBadRequest},
		{"pop NUL queue", "GET", "/api/v1/pop/queue/o%00k", "", http.StatusBadRequest},
		{"pop non-UTF-8 queue", "GET", "/api/v1/pop/queue/o%ffk", "", http.StatusBadRequest},
		{"pop bidi group", "GET", "/api/v1/pop/queue/ok?consumerGroup=g%E2%80%AE", "", http.StatusBadRequest},
		{"pop blank group", "GET", "/api/v1/pop/queue/ok?consumerGroup=%20%20", "", http.StatusBadRequest},
		{"pop bad query escape", "GET", "/api/v1/pop/queue/ok?consumerGroup=%zz", "", http.StatusBadRequest},
		{"pop long partition", "GET", "/api/v1/pop/queue/ok/partition/" + long, "", http.StatusBadRequest},
		post("ack empty body", "/api/v1/ack", ""),
		post("ack empty object", "/api/v1/ack", `{}`),
		post("ack no partition", "/api/v1/ack", `{"transactionId":"x"}`),
		post("ack no transaction", "/api/v1/ack", `{"partitionId":"`+uuid.NewString()+`"}`),
		post("ack number ids", "/api/v1/ack", `{"transactionId":1,"partitionId":2}`),
		post("ack malformed", "/api/v1/ack", `{"transactionId":"x",`),
		post("ack batch empty", "/api/v1/ack/batch", `{"acknowledgments":[]}`),
		post("ack batch missing", "/api/v1/ack/batch", `{}`),
		post("ack batch object", "/api/v1/ack/batch", `{"acknowledgments":{}}`),
		post("transaction empty body", "/api/v1/transaction", ""),
		post("transaction no operations", "/api/v1/transaction", `{"operations":[]}`),
		post("transaction operations string", "/api/v1/transaction", `{"operations":"all"}`),
		post("transaction unknown type", "/api/v1/transaction", `{"operations":[{"type":"drop"}]}`),
		post("transaction bad push", "/api/v1/transaction", `{"operations":[{"type":"push","items":[{"queue":""}]}]}`),
		post("transaction ack bad id", "/api/v1/transaction", `{"operations":[{"type":"ack","transactionId":"t","partitionId":"x"}]}`),
		post("configure empty", "/api/v1/configure", `{}`),
		post("configure bad option", "/api/v1/configure", `{"queue":"ok","options":{"bogus":true}}`),
		post("extend malformed id", "/api/v1/lease/not-a-lease/extend", `{"seconds":10}`),
		post("extend seconds word", "/api/v1/lease/"+uuid.NewString()+"/extend", `{"seconds":"ten"}`),
		post("extend seconds negative", "/api/v1/lease/"+uuid.NewString()+"/extend", `{"seconds":-1}`),
		post("extend two values", "/api/v1/lease/"+uuid.NewString()+"/extend", `{"seconds":1}{"seconds":2}`),
		{"unknown route", "GET", "/api/v1/nothing", "", http.StatusNotFound},
		{"outside the dashboard", "GET", "/index.html", "", http.StatusNotFound},
		{"unknown version", "POST", "/api/v2/push", `{"items":[{"queue":"ok"}]}`, http.StatusNotFound},
		{"pop without queue", "GET", "/api/v1/pop/queue/", "", http.StatusNotFound},
	}
}

func TestCoreHTTPBadInput(t *testing.T) {
	t.Parallel()
	r := startCoreReplica(t, nil)
	r.push(api.PushItem{Queue: "ok", Payload: json.RawMessage(`"first"`)})
	before := r.rowCounts()
	for _, c := range coreBadInputs() {
		res := r.do(c.method, c.path, c.body)
		requireCoreError(t, c.name, res, c.status)
		coreSameCounts(t, c.name, before, r.rowCounts())
	}
	// Wrong methods on real routes: 405, in JSON.
	for _, c := range []coreBadRequest{
		{"GET push", "GET", "/api/v1/push", "", 0},
		{"POST pop", "POST", "/api/v1/pop/queue/ok", `{}`, 0},
		{"PUT ack", "PUT", "/api/v1/ack", `{}`, 0},
		{"DELETE configure", "DELETE", "/api/v1/configure", "", 0},
	} {
		requireCoreError(t, c.name, r.do(c.method, c.path, c.body), http.StatusMethodNotAllowed)
	}
	coreSameCounts(t, "after every bad request", before, r.rowCounts())
	// The coreReplica still serves normal traffic.
	r.push(api.PushItem{Queue: "ok", Payload: json.RawMessage(`"second"`)})
	got := r.pop("/api/v1/pop/queue/ok?batch=10")
	if len(got.Messages) != 2 || string(got.Messages[1].Data) != `"second"` {
		t.Errorf("after the bad requests, pop got %+v", got.Messages)
	}
}

// A body with a stray closing bracket after the JSON value is rejected.
func TestCoreHTTPTrailingBracketRejected(t *testing.T) {
	t.Parallel()
	r := startCoreReplica(t, nil)
	for _, body := range []string{`{"items":[{"queue":"ok"}]}}`, `{"items":[{"queue":"ok"}]}]`} {
		requireCoreError(t, body, r.do("POST", "/api/v1/push", body), http.StatusBadRequest)
	}
	if n := r.count(`SELECT count(*) FROM lethe.segments`); n != 0 {
		t.Errorf("%d segments written by malformed bodies", n)
	}
}

// batch=0 and partitions=0 are absurd: 400, not "use the default".
func TestCoreHTTPZeroBatchAndPartitionsRejected(t *testing.T) {
	t.Parallel()
	r := startCoreReplica(t, nil)
	r.push(api.PushItem{Queue: "ok", Payload: json.RawMessage(`1`)})
	for _, q := range []string{"?batch=0", "?partitions=0"} {
		requireCoreError(t, q, r.do("GET", "/api/v1/pop/queue/ok"+q, ""), http.StatusBadRequest)
	}
}

// A body over the server's limit answers 413 without being read whole. The
// coreReplica's limit is 64 MiB, so this builds a server on the same engine with
// a small one.
func TestCoreHTTPHugeBody(t *testing.T) {
	t.Parallel()
	r := startCoreReplica(t, nil)
	srv := httptest.NewServer(httpapi.New(httpapi.Config{Engine: r.srv.Engine, MaxBodyBytes: 64 << 10}).Handler())
	t.Cleanup(srv.Close)
	r.push(api.PushItem{Queue: "ok", Payload: json.RawMessage(`1`)})
	before := r.rowCounts()
	huge := `{"items":[{"queue":"ok","payload":"` + strings.Repeat("x", 200<<10) + `"}]}`
	for _, path := range []string{"/api/v1/push", "/api/v1/ack", "/api/v1/transaction", "/api/v1/configure"} {
		requireCoreError(t, "huge body to "+path, coreDo(t, "POST", srv.URL+path, huge), http.StatusRequestEntityTooLarge)
	}
	coreSameCounts(t, "huge bodies", before, r.rowCounts())
	var res []api.PushResult
	out := coreDo(t, "POST", srv.URL+"/api/v1/push", `{"items":[{"queue":"ok","payload":2}]}`)
	if out.status != http.StatusCreated || json.Unmarshal(out.body, &res) != nil || res[0].Status != api.StatusQueued {
		t.Errorf("normal push after huge bodies: %d %s", out.status, out.body)
	}
}

package faults_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/internal/config"
	"github.com/lethe-mq/lethe/internal/httpapi"
	"github.com/lethe-mq/lethe/internal/testserver"
)

// corpusMaxPayload is the replica's MAX_PAYLOAD_BYTES, small so a payload
// over it is cheap to send.
const corpusMaxPayload = 4096

// TestBadRequestCorpus sends every malformed request of the corpus to a real
// replica and requires of each: no 5xx, the expected 4xx, a JSON error body
// with a request id and nothing of the database in it, and no row of any
// lethe table changed. Every documented route gets at least one.
func TestBadRequestCorpus(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, testserver.Options{Config: func(c *config.Server) {
		c.MaxPayloadBytes = corpusMaxPayload
		c.DataDir = t.TempDir()
		c.TestClock = true // so the test-only routes exist and are covered
	}})
	query := seed(t, s)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, s.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)

	cases := corpus(query)
	if len(cases) < 150 {
		t.Fatalf("the corpus has %d requests, want at least 150", len(cases))
	}
	leaks := leakWords(t, s.DatabaseURL)
	before := snapshot(t, conn)
	matcher := newRouteMatcher(documentedRoutes(t))
	covered := map[string]int{}
	fivexx := 0
	for _, c := range cases {
		a := send(t, s.URL, c)
		if a.status >= 500 {
			fivexx++
		}
		checkAnswer(t, c, a, leaks)
		if after := snapshot(t, conn); len(changedTables(before, after)) > 0 {
			t.Errorf("%s: %s %.80s changed lethe.%v", c.name, c.method, c.path, changedTables(before, after))
			before = after
		}
		for _, rt := range matcher.routesOf(c) {
			covered[rt]++
		}
	}
	for _, rt := range documentedRoutes(t) {
		if covered[rt] == 0 {
			t.Errorf("no bad request in the corpus exercises %s", rt)
		}
	}
	t.Logf("%d bad requests over %d routes: %d answered 5xx", len(cases), len(covered), fivexx)
}

// A transactionId holding U+0000 once poisoned a queue: accepted, then
// every pop of the queue answered 500. It is refused, and pops of the queue
// keep working for every group.
func TestPoisonPillIsRefusedAndPopsWork(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, testserver.Options{Config: func(c *config.Server) { c.DataDir = t.TempDir() }})
	seed(t, s)
	for _, body := range []string{
		`{"items":[{"queue":"seed","partition":"p1","payload":1,"transactionId":"poison\u0000pill"}]}`,
		`{"items":[{"queue":"seed","partition":"p2","payload":1,"transactionId":"\u0000"}]}`,
		"{\"items\":[{\"queue\":\"seed\",\"payload\":1,\"transactionId\":\"raw\x00nul\"}]}",
	} {
		a := send(t, s.URL, badRequest{"poison", "POST", "/api/v1/push", body, http.StatusBadRequest})
		checkAnswer(t, badRequest{"poison " + body, "POST", "/api/v1/push", body, http.StatusBadRequest}, a, leakWords(t, s.DatabaseURL))
	}
	txn := `{"operations":[{"type":"push","items":[{"queue":"seed","payload":1,"transactionId":"t\u0000"}]}]}`
	a := send(t, s.URL, badRequest{"poison in a transaction", "POST", "/api/v1/transaction", txn, http.StatusBadRequest})
	checkAnswer(t, badRequest{"poison in a transaction", "POST", "/api/v1/transaction", txn, http.StatusBadRequest}, a, nil)
	for _, group := range []string{"", "g2", "g3", "analytics"} {
		path := "/api/v1/pop/queue/seed?batch=10&consumerGroup=" + group
		got := send(t, s.URL, badRequest{"pop", "GET", path, "", 0})
		if got.status != http.StatusOK || strings.Contains(string(got.body), "poison") {
			t.Errorf("pop of seed for group %q after the poison pills: %d %s", group, got.status, got.body)
		}
	}
}

// Bad names, as they arrive in a path or query string (URL-escaped).
var (
	badPathNames = map[string]string{
		"NUL": "a%00b", "not UTF-8": "o%ffk", "control": "a%01b", "DEL": "a%7f", "C1 control": "a%C2%85b",
		"bidi override": "abc%E2%80%AEcba", "blank": "%20%20", "too long": strings.Repeat("n", 600),
	}
	badQueryNames = map[string]string{
		"NUL": "a%00b", "not UTF-8": "%ff", "bidi isolate": "g%E2%81%A6", "blank": "%E3%80%80", "too long": strings.Repeat("n", 600),
	}
)

// corpus is every bad request; liveQuery is the query_id of the seeded
// streaming query.
func corpus(liveQuery string) []badRequest {
	var all []badRequest
	for _, part := range [][]badRequest{pathNameCases(), queryNameCases(), queryParamCases(), pushCases(),
		bodyCases(), methodCases(), streamsCases(liveQuery), tierCases()} {
		all = append(all, part...)
	}
	return all
}

// pathNameCases puts each bad name in each {param} of each route.
func pathNameCases() []badRequest {
	good := map[string]string{"queue": "seed", "partition": "p1", "group": "g1", "leaseId": uuid.NewString(),
		"id": "1", "partitionId": uuid.NewString(), "transactionId": "s1"}
	routes := []struct{ method, pattern, body string }{
		{"GET", "/api/v1/pop/queue/{queue}", ""},
		{"GET", "/api/v1/pop/queue/{queue}/partition/{partition}", ""},
		{"POST", "/api/v1/lease/{leaseId}/extend", `{"seconds":10}`},
		{"GET", "/api/v1/resources/queues/{queue}", ""},
		{"DELETE", "/api/v1/resources/queues/{queue}", ""},
		{"GET", "/api/v1/consumer-groups/{group}", ""},
		{"DELETE", "/api/v1/consumer-groups/{group}", ""},
		{"DELETE", "/api/v1/consumer-groups/{group}/queues/{queue}", ""},
		{"POST", "/api/v1/consumer-groups/{group}/subscription", `{"subscriptionTimestamp":"2030-01-01T00:00:00Z"}`},
		{"POST", "/api/v1/consumer-groups/{group}/queues/{queue}/seek", `{"toEnd":true}`},
		{"POST", "/api/v1/consumer-groups/{group}/queues/{queue}/partitions/{partition}/seek", `{"toEnd":true}`},
		{"DELETE", "/api/v1/dlq/{id}", ""},
		{"POST", "/api/v1/dlq/{id}/replay", ""},
		{"DELETE", "/api/v1/retention/holds/{id}", ""},
		{"GET", "/api/v1/messages/{partitionId}/{transactionId}", ""},
		{"DELETE", "/api/v1/messages/{partitionId}/{transactionId}", ""},
		{"GET", "/api/v1/status/queues/{queue}", ""},
	}
	var out []badRequest
	for _, rt := range routes {
		for param := range good {
			if !strings.Contains(rt.pattern, "{"+param+"}") {
				continue
			}
			for _, what := range sortedKeys(badPathNames) {
				path := rt.pattern
				for p, v := range good {
					if p == param {
						v = badPathNames[what]
					}
					path = strings.ReplaceAll(path, "{"+p+"}", v)
				}
				out = append(out, badRequest{fmt.Sprintf("%s %s: %s %s", rt.method, rt.pattern, param, what),
					rt.method, path, rt.body, http.StatusBadRequest})
			}
		}
	}
	return out
}

// queryNameCases puts each bad name in each name parameter of the query.
func queryNameCases() []badRequest {
	params := []struct{ path, param string }{
		{"/api/v1/pop/queue/seed", "consumerGroup"}, {"/api/v1/pop", "namespace"}, {"/api/v1/pop", "task"},
		{"/api/v1/resources/queues", "namespace"}, {"/api/v1/resources/queues", "task"},
		{"/api/v1/status/queues", "namespace"}, {"/api/v1/status/queues", "task"},
		{"/api/v1/dlq", "queue"}, {"/api/v1/dlq", "consumerGroup"}, {"/api/v1/dlq", "partition"},
		{"/api/v1/messages", "queue"}, {"/api/v1/messages", "partition"},
		{"/api/v1/retention/status", "queue"}, {"/api/v1/retention/history", "queue"}, {"/api/v1/analytics/retention", "queue"},
	}
	var out []badRequest
	for _, p := range params {
		for _, what := range sortedKeys(badQueryNames) {
			out = append(out, badRequest{fmt.Sprintf("GET %s?%s: %s", p.path, p.param, what),
				"GET", p.path + "?" + p.param + "=" + badQueryNames[what], "", http.StatusBadRequest})
		}
	}
	return out
}

func queryParamCases() []badRequest {
	get := func(path string) badRequest {
		return badRequest{"GET " + path, "GET", path, "", http.StatusBadRequest}
	}
	pop := "/api/v1/pop/queue/seed?consumerGroup=g9&"
	return []badRequest{
		get(pop + "batch=-1"), get(pop + "batch=0"), get(pop + "batch=ten"), get(pop + "batch=99999999999999999999"),
		get(pop + "batch=10001"), get(pop + "wait=true&timeout=abc"), get(pop + "wait=true&timeout=-1"),
		get(pop + "wait=true&timeout=600001"), get(pop + "wait=maybe"), get(pop + "autoAck=2"),
		get(pop + "partitions=101"), get(pop + "partitions=0"),
		get(pop + "subscriptionFrom=yesterday"), get(pop + "batch=%zz"), get(pop + "batch=1;wait=true"),
		get("/api/v1/pop"), get("/api/v1/pop?batch=2"),
		get("/api/v1/dlq?limit=0"), get("/api/v1/dlq?limit=x"), get("/api/v1/dlq?offset=-1"),
		get("/api/v1/dlq?from=yesterday"), get("/api/v1/dlq?from=2024-02-01&to=2024-01-01"),
		get("/api/v1/messages?limit=100001"), get("/api/v1/messages?to=2024-13-01"), get("/api/v1/messages?offset=x"),
		get("/api/v1/consumer-groups?limit=100000000000000000000"), get("/api/v1/consumer-groups/lagging?minLagSeconds=-5"),
		get("/api/v1/consumer-groups/lagging?minLagSeconds=x"), get("/api/v1/consumer-groups/g1?limit=-1"),
		get("/api/v1/status/queues?includePartitions=true"), get("/api/v1/status/queues/seed?includePartitions=maybe"),
		get("/api/v1/resources/namespaces?limit=0"), get("/api/v1/resources/tasks?offset=-3"),
		get("/api/v1/retention/history?rule=ttl"), get("/api/v1/retention/history?since=-1h"),
		get("/api/v1/retention/history?limit=5000"), get("/api/v1/retention/history?lostOnly=perhaps"),
		get("/api/v1/analytics/retention?from=2020-01-01&to=2030-01-01"), get("/api/v1/analytics/retention?to=garbage"),
		get("/api/v1/retention/status?queue=%zz"),
		{"DELETE group deleteMetadata=maybe", "DELETE", "/api/v1/consumer-groups/g1?deleteMetadata=maybe", "", http.StatusBadRequest},
		{"extend not a lease", "POST", "/api/v1/lease/not-a-lease/extend", `{"seconds":10}`, http.StatusBadRequest},
		{"replay not an id", "POST", "/api/v1/dlq/abc/replay", "", http.StatusBadRequest},
		{"delete dead letter not an id", "DELETE", "/api/v1/dlq/-5", "", 0},
		{"replay unknown dead letter", "POST", "/api/v1/dlq/999999/replay", "", http.StatusNotFound},
		get("/api/v1/retention/holds?released=maybe"), get("/api/v1/retention/holds?queue=%zz"),
		{"release a hold not an id", "DELETE", "/api/v1/retention/holds/abc", "", http.StatusBadRequest},
		{"release hold 0", "DELETE", "/api/v1/retention/holds/0", "", http.StatusBadRequest},
		{"release an unknown hold", "DELETE", "/api/v1/retention/holds/999999", "", http.StatusNotFound},
		{"hold an unknown queue", "POST", "/api/v1/retention/holds", `{"queue":"nope","reason":"audit"}`, http.StatusNotFound},
		{"message of a partition id that is not one", "GET", "/api/v1/messages/xyz/s1", "", 0},
	}
}

// pushCases are malformed push bodies; push() builds one item's body.
func pushCases() []badRequest {
	post := func(name, body string, want int) badRequest {
		return badRequest{"push " + name, "POST", "/api/v1/push", body, want}
	}
	item := func(fields string) string { return `{"items":[{` + fields + `}]}` }
	long := strings.Repeat("n", 600)
	bad := http.StatusBadRequest
	manyItems := `{"items":[` + strings.TrimSuffix(strings.Repeat(`{"queue":"seed"},`, 10001), ",") + `]}`
	return []badRequest{
		post("empty body", "", bad), post("truncated", `{"items":[{"queue":"seed"`, bad), post("array", `[]`, bad),
		post("string", `"x"`, bad), post("null", `null`, bad), post("no items", `{}`, bad),
		post("null items", `{"items":null}`, bad),
		post("items a string", `{"items":"x"}`, bad), post("item a number", `{"items":[1]}`, bad),
		post("item null", `{"items":[null]}`, bad), post("queue a number", item(`"queue":5`), bad),
		post("missing queue", item(`"payload":1`), bad), post("trailing garbage", item(`"queue":"seed"`)+` x`, bad),
		post("NUL transactionId", item(`"queue":"seed","transactionId":"a\u0000b"`), bad),
		post("NUL queue", item(`"queue":"se\u0000ed"`), bad), post("NUL partition", item(`"queue":"seed","partition":"\u0000"`), bad),
		post("NUL traceId", item(`"queue":"seed","traceId":"t\u0000"`), bad),
		post("NUL in payload", item(`"queue":"seed","payload":{"a":"x\u0000"}`), bad),
		post("NUL in payload key", item(`"queue":"seed","payload":{"\u0000":1}`), bad),
		post("NUL in unknown field", item(`"queue":"seed","extra":"\u0000"`), bad),
		post("lone surrogate queue", item(`"queue":"\ud800"`), bad),
		post("lone low surrogate payload", item(`"queue":"seed","payload":"\udc00"`), bad),
		post("surrogate then letter", item(`"queue":"seed","transactionId":"\ud83dA"`), bad),
		post("not UTF-8 queue", item("\"queue\":\"o\xffk\""), bad),
		post("not UTF-8 payload", item("\"queue\":\"seed\",\"payload\":\"\xc3\""), bad),
		post("overlong UTF-8", item("\"queue\":\"\xc0\xaf\""), bad),
		post("number beyond float64", item(`"queue":"seed","payload":1e999999`), bad),
		post("negative beyond float64", item(`"queue":"seed","payload":[-1e400]`), bad),
		post("number below float64", item(`"queue":"seed","payload":{"x":1e-400}`), bad),
		post("blank queue", item(`"queue":"   "`), bad), post("bidi queue", item(`"queue":"seed\u202e"`), bad),
		post("C1 partition", item(`"queue":"seed","partition":"p\u0085"`), bad),
		post("tab in transactionId", item(`"queue":"seed","transactionId":"a\tb"`), bad),
		post("long queue", item(`"queue":"`+long+`"`), bad), post("long transactionId", item(`"queue":"seed","transactionId":"`+long+`"`), bad),
		post("long traceId", item(`"queue":"seed","traceId":"`+long+`"`), bad),
		post("good item then bad", `{"items":[{"queue":"seed","payload":1},{"queue":"seed\u0000"}]}`, bad),
		post("payload over MAX_PAYLOAD_BYTES", item(`"queue":"seed","payload":"`+strings.Repeat("x", corpusMaxPayload+10)+`"`), http.StatusRequestEntityTooLarge),
		post("body over the limit", item(`"queue":"seed","payload":"`+strings.Repeat("x", httpapi.MaxBodyBytesDefault)+`"`), http.StatusRequestEntityTooLarge),
		post("too many items", manyItems, bad),
	}
}

func bodyCases() []badRequest {
	bad := http.StatusBadRequest
	pid := uuid.NewString()
	post := func(path string, bodies ...string) []badRequest {
		var out []badRequest
		for _, b := range bodies {
			out = append(out, badRequest{"POST " + path + " " + b, "POST", path, b, bad})
		}
		return out
	}
	var out []badRequest
	for _, part := range [][]badRequest{
		post("/api/v1/ack", ``, `{}`, `{"transactionId":"s1"}`, `{"transactionId":1,"partitionId":"`+pid+`"}`,
			`{"transactionId":"s\u0000","partitionId":"`+pid+`"}`, `{"transactionId":"s1","partitionId":"`+pid+`","consumerGroup":"g\u0000"}`,
			`{"transactionId":"s1","partitionId":"`+pid+`","consumerGroup":"g\u202e"}`, `{"transactionId":"s1","partitionId":"`+pid+`","consumerGroup":" "}`,
			"{\"transactionId\":\"s1\",\"partitionId\":\""+pid+"\",\"consumerGroup\":\"\xff\"}",
			`{"transactionId":"s1","partitionId":"`+pid+`","error":"\ud800"}`, `{"transactionId":"s1","partitionId":"`+pid+`","retries":1e999}`,
			`{"transactionId":"s1","partitionId":"`+pid+`","status":7}`),
		post("/api/v1/ack/batch", `{"acknowledgments":[]}`, `{}`, `{"acknowledgments":{}}`, `{"acknowledgments":[1]}`,
			`{"acknowledgments":[{"transactionId":"\u0000","partitionId":"`+pid+`"}]}`,
			`{"consumerGroup":"g\u0001","acknowledgments":[{"transactionId":"s1","partitionId":"`+pid+`"}]}`),
		post("/api/v1/transaction", ``, `{"operations":[]}`, `{"operations":"all"}`, `{"operations":[{"type":"drop"}]}`,
			`{"operations":[{"type":"push","items":[{"queue":"   "}]}]}`,
			`{"operations":[{"type":"push","items":[{"queue":"new-q","payload":1}]},{"type":"ack","transactionId":"t","partitionId":"x"}]}`,
			`{"operations":[{"type":"ack","transactionId":"\u0000","partitionId":"`+pid+`"}]}`,
			`{"operations":[{"type":"push","items":[{"queue":"seed"}]}],"requiredLeases":["\u0000"]}`,
			`{"operations":[{"type":"push","items":[{"queue":"new-q","payload":1e400}]}]}`),
		post("/api/v1/configure", `{}`, `{"queue":"se\u0000ed"}`, `{"queue":"seed","namespace":"n\u202e"}`,
			`{"queue":"seed","task":"  "}`, `{"queue":"seed","options":{"bogus":true}}`, `{"queue":"seed","options":{"leaseTime":"long"}}`,
			`{"queue":"seed","options":{"leaseTime":0}}`, `{"queue":"`+strings.Repeat("q", 513)+`"}`,
			`{"queue":"seed","options":{"retentionSeconds":-1}}`, `{"queue":"seed","options":{"leaseTime":1e999}}`, `{"queue":5}`),
		post("/api/v1/lease/"+uuid.NewString()+"/extend", `{"seconds":"ten"}`, `{"seconds":-1}`, `{"seconds":1}{"seconds":2}`, `{"seconds":1e400}`),
		post("/api/v1/consumer-groups/g1/subscription", `{}`, `{"subscriptionTimestamp":"yesterday"}`, `{"subscriptionTimestamp":5}`),
		post("/api/v1/consumer-groups/g1/queues/seed/seek", `{"timestamp":"yesterday"}`, `{"toEnd":"yes"}`, ``),
		post("/api/v1/system/maintenance", ``, `{}`, `{"enabled":"yes"}`, `[true]`, `{"enabled":true} {}`),
		post("/api/v1/system/maintenance/pop", ``, `{}`, `{"enabled":1}`, `{"enabled":null}`),
		post("/api/v1/retention/holds", ``, `{}`, `{"queue":"seed"}`, `{"queue":"seed","reason":"   "}`,
			`{"queue":"seed","reason":"`+strings.Repeat("r", 1025)+`"}`, `{"queue":"se\u0000ed","reason":"x"}`, `{"reason":5}`),
	} {
		out = append(out, part...)
	}
	return out
}

// methodCases are wrong methods on served paths (405) and unserved paths
// (404); they reach the routes that take no input.
func methodCases() []badRequest {
	wrong := func(method, path string) badRequest {
		return badRequest{method + " " + path, method, path, "", http.StatusMethodNotAllowed}
	}
	missing := func(path string) badRequest { return badRequest{"GET " + path, "GET", path, "", http.StatusNotFound} }
	return []badRequest{
		wrong("GET", "/api/v1/push"), wrong("PUT", "/api/v1/ack"), wrong("GET", "/api/v1/ack/batch"),
		wrong("GET", "/api/v1/transaction"), wrong("DELETE", "/api/v1/configure"), wrong("POST", "/api/v1/pop"),
		wrong("POST", "/api/v1/pop/queue/seed"), wrong("DELETE", "/api/v1/pop/queue/seed/partition/p1"),
		wrong("GET", "/api/v1/lease/"+uuid.NewString()+"/extend"), wrong("PATCH", "/api/v1/resources/queues/seed"),
		wrong("POST", "/api/v1/resources/queues"), wrong("POST", "/health"), wrong("POST", "/metrics"),
		wrong("PUT", "/metrics/prometheus"), wrong("DELETE", "/api/v1/status"), wrong("POST", "/api/v1/status/queues"),
		wrong("PUT", "/api/v1/status/queues/seed"), wrong("GET", "/api/v1/dlq/1/replay"), wrong("POST", "/api/v1/dlq"),
		wrong("POST", "/api/v1/retention/status"), wrong("PUT", "/api/v1/retention/history"),
		wrong("DELETE", "/api/v1/analytics/retention"), wrong("POST", "/api/v1/analytics/postgres-stats"), wrong("POST", "/api/v1/doctor"),
		wrong("PUT", "/api/v1/retention/holds"), wrong("GET", "/api/v1/retention/holds/1"),
		wrong("DELETE", "/api/v1/system/maintenance"), wrong("PUT", "/api/v1/system/maintenance/pop"),
		wrong("POST", "/api/v1/resources/overview"), wrong("POST", "/api/v1/resources/namespaces"),
		wrong("POST", "/api/v1/resources/tasks"), wrong("POST", "/api/v1/consumer-groups"),
		wrong("POST", "/api/v1/consumer-groups/lagging"), wrong("GET", "/api/v1/consumer-groups/g1/subscription"),
		wrong("GET", "/api/v1/consumer-groups/g1/queues/seed/seek"), wrong("PUT", "/api/v1/consumer-groups/g1/queues/seed"),
		wrong("GET", "/api/v1/consumer-groups/g1/queues/seed/partitions/p1/seek"), wrong("POST", "/api/v1/messages"),
		wrong("PUT", "/api/v1/messages/"+uuid.NewString()+"/s1"),
		wrong("POST", "/"), wrong("DELETE", "/dashboard/main.js"), wrong("POST", "/ready"),
		wrong("POST", "/api/v1/openapi.json"), wrong("POST", "/api/v1/analytics/table-stats"),
		missing("/nope"), missing("/dashboard/nope.js"), missing("/api/v1/nothing"), missing("/api/v2/push"), missing("/api/v1/pop/queue/"),
		missing("/api/v1/pop/queue/seed/extra/more"),
	}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

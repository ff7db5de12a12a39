package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/clock"
	"github.com/lethe-mq/lethe/internal/config"
	"github.com/lethe-mq/lethe/internal/testserver"
)

const (
	oaToken    = "plain-token"
	oaOperator = "operator-token"
)

// oaClient calls a replica through the OpenAPI validator.
type oaClient struct {
	t     *testing.T
	url   string
	http  *http.Client
	srv   *testserver.Server
	clock *clock.Fake
}

// call sends body with token ("" for none), requires status and decodes
// the answer into out.
func (c *oaClient) call(method, path, token, body string, status int, out any) {
	c.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, c.url+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != status {
		c.t.Fatalf("%s %s: status %d %s, want %d", method, path, resp.StatusCode, clipBody(b), status)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			c.t.Fatalf("%s %s: decode %s: %v", method, path, clipBody(b), err)
		}
	}
}

func (c *oaClient) op(method, path, body string, status int, out any) {
	c.t.Helper()
	c.call(method, path, oaOperator, body, status, out)
}

// Real answers of every kind of route match openapi.json: the validator
// checks each answer below (status described, content type, schema with
// no undescribed field). The scenario reaches every route the list at the
// test's end names, with data in each list so that item schemas are
// checked too.
func TestResponsesMatchOpenAPI(t *testing.T) {
	t.Parallel()
	v := newOpenAPIValidator(t)
	clk := clock.NewFake(coreT0)
	srv := testserver.Start(t, testserver.Options{Clock: clk, Config: func(c *config.Server) {
		c.AuthToken, c.OperatorToken = oaToken, oaOperator
		c.TestClock = true // the test-only routes are described too
	}})
	c := &oaClient{t: t, url: srv.URL, http: v.Client(), srv: srv, clock: clk}

	oaProbesAndErrors(c)
	pid, leaseID := oaMessaging(c)
	oaReadModels(c, pid)
	oaStreamsAndTraces(c, pid)
	oaRetention(c)
	oaOperatorRoutes(c, leaseID)
	oaTiers(c)

	for _, route := range []struct {
		route  string
		status int
	}{
		{"POST /api/v1/push", 201}, {"GET /api/v1/pop/queue/{queue}", 200}, {"POST /api/v1/ack", 200},
		{"POST /api/v1/configure", 200}, {"GET /api/v1/resources/queues", 200}, {"GET /api/v1/consumer-groups", 200},
		{"GET /api/v1/dlq", 200}, {"GET /api/v1/messages", 200}, {"GET /api/v1/status", 200},
		{"GET /api/v1/analytics/retention", 200}, {"GET /api/v1/retention/history", 200},
		{"POST /api/v1/push", 400}, {"GET /api/v1/status", 401}, {"DELETE /api/v1/dlq/{id}", 403},
		{"GET /api/v1/resources/queues/{queue}", 404}, {"GET /ready", 200},
		{"GET /api/v1/retention/tiers", 200}, {"GET /api/v1/retention/explain/{queue}", 200}, {"GET /api/v1/doctor", 200},
		{"GET /api/v1/retention/explain/{queue}", 404}, {"POST /api/v1/retention/changes/{queue}/confirm", 200},
		{"POST /api/v1/retention/changes/{queue}/confirm", 404}, {"POST /api/v1/test/clock", 200},
		{"POST /api/v1/test/clock", 400}, {"POST /api/v1/test/retention/run", 200},
	} {
		if !v.covered(route.route, route.status) {
			t.Errorf("the scenario did not check an answer %d of %s", route.status, route.route)
		}
	}
}

func oaProbesAndErrors(c *oaClient) {
	c.call("GET", "/health", "", "", 200, nil)
	c.call("GET", "/ready", "", "", 200, nil)
	c.call("GET", "/api/v1/openapi.json", "", "", 200, nil)
	c.call("GET", "/metrics", "", "", 200, nil)
	c.call("GET", "/", "", "", 200, nil)
	c.call("GET", "/dashboard/main.js", "", "", 200, nil)
	c.call("GET", "/dashboard/style.css", "", "", 200, nil)
	c.call("GET", "/dashboard/nope.js", "", "", 404, nil)
	c.call("GET", "/dashboard/..%2fdashboard.go", "", "", 404, nil)
	c.call("GET", "/api/v1/status", "", "", 401, nil)
	c.call("GET", "/api/v1/status", "wrong", "", 401, nil)
	c.call("POST", "/api/v1/push", oaToken, `{"items":[{"queue":"bad\u0001name"}]}`, 400, nil)
	c.call("POST", "/api/v1/push", oaToken, `{"items":`, 400, nil)
	c.call("DELETE", "/api/v1/dlq/1", oaToken, "", 403, nil)
	c.call("GET", "/api/v1/resources/queues/nope", oaToken, "", 404, nil)
	c.call("GET", "/api/v1/nope", oaToken, "", 404, nil)
	c.call("POST", "/health", "", "", 405, nil)
}

// oaMessaging pushes, pops, acks (one to the dead letters), runs a
// transaction and a batch ack; it returns a partition id and a live lease.
func oaMessaging(c *oaClient) (string, string) {
	c.op("POST", "/api/v1/configure", `{"queue":"orders","namespace":"shop","task":"billing","options":{"retentionEnabled":true,"retentionSeconds":3600,"retryLimit":0}}`, 200, nil)
	var pushed []api.PushResult
	c.call("POST", "/api/v1/push", oaToken, `{"items":[
		{"queue":"orders","partition":"p1","payload":{"n":1},"transactionId":"t1","traceId":"trace-1"},
		{"queue":"orders","partition":"p1","payload":{"n":2},"transactionId":"t2"},
		{"queue":"orders","partition":"p2","payload":[1,2],"transactionId":"t3"},
		{"queue":"orders","partition":"p1","payload":{"n":1},"transactionId":"t1"}]}`, 201, &pushed)
	var pop api.PopResponse
	c.call("GET", "/api/v1/pop/queue/orders/partition/p1?batch=2&consumerGroup=billing", oaToken, "", 200, &pop)
	m0, m1 := pop.Messages[0], pop.Messages[1]
	c.call("POST", "/api/v1/ack", oaToken, oaJSON(api.AckRequest{TransactionID: m0.TransactionID, PartitionID: m0.PartitionID,
		LeaseID: m0.LeaseID, Status: "completed", ConsumerGroup: "billing"}), 200, nil)
	c.call("POST", "/api/v1/ack", oaToken, oaJSON(api.AckRequest{TransactionID: m1.TransactionID, PartitionID: m1.PartitionID,
		LeaseID: m1.LeaseID, Status: "dlq", ConsumerGroup: "billing", Error: "cannot bill"}), 200, nil)
	c.call("POST", "/api/v1/ack", oaToken, oaJSON(api.AckRequest{TransactionID: "nope", PartitionID: m1.PartitionID,
		Status: "completed", ConsumerGroup: "billing"}), 200, nil)
	c.call("GET", "/api/v1/pop/queue/orders/partition/p1?consumerGroup=billing", oaToken, "", 204, nil)
	c.call("GET", "/api/v1/pop?namespace=shop&batch=5", oaToken, "", 200, &pop)
	q := pop.Messages[0]
	c.call("POST", "/api/v1/lease/"+q.LeaseID+"/extend", oaToken, `{"seconds":60}`, 200, nil)
	c.call("POST", "/api/v1/transaction", oaToken, oaJSON(api.TransactionRequest{Operations: []api.Operation{
		{Type: "ack", TransactionID: q.TransactionID, PartitionID: q.PartitionID, LeaseID: q.LeaseID, Status: "completed"},
		{Type: "push", Items: []api.PushItem{{Queue: "audit", Payload: json.RawMessage(`"billed"`)}}}}}), 200, nil)
	c.call("GET", "/api/v1/pop/queue/orders?consumerGroup=late&batch=1", oaToken, "", 200, &pop)
	l := pop.Messages[0]
	c.call("POST", "/api/v1/ack/batch", oaToken, oaJSON(api.AckBatchRequest{ConsumerGroup: "late",
		Acknowledgments: []api.AckRequest{{TransactionID: l.TransactionID, PartitionID: l.PartitionID, LeaseID: l.LeaseID, Status: "failed"}}}), 200, nil)
	c.call("GET", "/api/v1/pop/queue/orders/partition/p2?consumerGroup=holder", oaToken, "", 200, &pop)
	return m0.PartitionID, pop.Messages[0].LeaseID
}

func oaReadModels(c *oaClient, pid string) {
	for _, path := range []string{"/api/v1/resources/queues", "/api/v1/resources/queues?namespace=shop", "/api/v1/resources/queues/orders",
		"/api/v1/resources/overview", "/api/v1/resources/namespaces", "/api/v1/resources/tasks",
		"/api/v1/consumer-groups", "/api/v1/consumer-groups/lagging?minLagSeconds=0", "/api/v1/consumer-groups/billing",
		"/api/v1/dlq", "/api/v1/dlq?queue=orders&consumerGroup=billing", "/api/v1/messages", "/api/v1/messages?queue=orders&status=dead",
		"/api/v1/messages/" + pid + "/t1", "/api/v1/status", "/api/v1/status/queues", "/api/v1/status/queues/orders?includePartitions=true",
		"/api/v1/status/queues/orders", "/api/v1/system/maintenance", "/api/v1/system/maintenance/pop",
		"/api/v1/analytics/postgres-stats", "/api/v1/analytics/table-stats", "/api/v1/retention/status", "/api/v1/retention/status?queue=orders"} {
		c.call("GET", path, oaToken, "", 200, nil)
	}
	c.call("GET", "/api/v1/consumer-groups/nobody", oaToken, "", 404, nil)
}

// oaStreamsAndTraces records a trace and reads it back three ways, and runs
// a streaming query through registration, a cycle, a state read and its
// removal.
func oaStreamsAndTraces(c *oaClient, pid string) {
	c.call("POST", "/api/v1/traces", oaToken, `{"transactionId":"t1","partitionId":"`+pid+`","data":{"step":1},"traceNames":["checkout"]}`, 201, nil)
	for _, path := range []string{"/api/v1/traces/" + pid + "/t1", "/api/v1/traces/names", "/api/v1/traces/by-name/checkout"} {
		c.call("GET", path, oaToken, "", 200, nil)
	}
	var q api.StreamQueryResponse
	c.call("POST", "/streams/v1/queries", oaToken, `{"name":"agg","source_queue":"orders","config_hash":"h1"}`, 200, &q)
	c.call("POST", "/streams/v1/queries", oaToken, `{"name":"agg","source_queue":"orders","config_hash":"h2"}`, 409, nil)
	c.call("POST", "/streams/v1/queries", oaToken, `{"name":"agg","source_queue":"orders","config_hash":"h2","reset":true}`, 403, nil)
	c.call("POST", "/streams/v1/queries", oaToken, `{"name":"other","source_queue":"nowhere","config_hash":"h1"}`, 404, nil)
	c.call("POST", "/streams/v1/cycle", oaToken, `{"query_id":"`+q.QueryID+`","partition_id":"`+uuid.NewString()+`"}`, 404, nil)
	c.call("POST", "/streams/v1/state/get", oaToken, `{"query_id":"`+q.QueryID+`","partition_id":"`+uuid.NewString()+`"}`, 404, nil)
	c.call("POST", "/streams/v1/cycle", oaToken, `{"query_id":"`+q.QueryID+`","partition_id":"`+pid+`",
		"state_ops":[{"type":"upsert","key":"k","value":{"n":1}}],"push_items":[{"queue":"sink","payload":1}],"ack":null}`, 200, nil)
	c.call("POST", "/streams/v1/state/get", oaToken, `{"query_id":"`+q.QueryID+`","partition_id":"`+pid+`"}`, 200, nil)
	c.op("DELETE", "/streams/v1/queries/agg", "", 200, nil)
}

// oaRetention lets retentionSeconds delete what groups had not read, so
// the history and the series hold rows with losses.
func oaRetention(c *oaClient) {
	c.clock.Advance(2 * time.Hour)
	if _, err := c.srv.Retention.RunCycle(context.Background()); err != nil {
		c.t.Fatalf("retention cycle: %v", err)
	}
	var hist api.RetentionHistory
	c.call("GET", "/api/v1/retention/history?lostOnly=true", oaToken, "", 200, &hist)
	if len(hist.Entries) == 0 || len(hist.Entries[0].Lost) == 0 {
		c.t.Fatalf("retention history after the cycle: %+v, want a deletion with losses", hist)
	}
	var series struct{ Series []json.RawMessage }
	c.call("GET", "/api/v1/analytics/retention", oaToken, "", 200, &series)
	if len(series.Series) == 0 {
		c.t.Fatalf("retention series after the cycle: %+v, want a bucket", series)
	}
	c.call("GET", "/api/v1/retention/history?queue=orders&rule=retention&since=24h&limit=5", oaToken, "", 200, nil)
	c.call("GET", "/api/v1/retention/history?rule=nope", oaToken, "", 400, nil)
	var report api.DoctorReport
	c.call("GET", "/api/v1/doctor", oaToken, "", 200, &report)
	if len(report.Checks) == 0 {
		c.t.Fatalf("doctor: %+v, want its checks", report)
	}
}

// oaOperatorRoutes: maintenance, seeks, subscription, dead-letter replay
// and delete, the refused message delete, group and queue deletion.
func oaOperatorRoutes(c *oaClient, leaseID string) {
	for _, path := range []string{"/api/v1/system/maintenance", "/api/v1/system/maintenance/pop"} {
		c.op("POST", path, `{"enabled":true}`, 200, nil)
		c.op("POST", path, `{"enabled":false}`, 200, nil)
	}
	c.op("POST", "/api/v1/system/maintenance", `{}`, 400, nil)
	c.op("POST", "/api/v1/consumer-groups/late/queues/orders/seek", `{"toEnd":true}`, 200, nil)
	c.op("POST", "/api/v1/consumer-groups/late/queues/orders/partitions/p1/seek",
		`{"timestamp":"`+coreT0.Format(time.RFC3339)+`"}`, 200, nil)
	c.op("POST", "/api/v1/consumer-groups/late/subscription", `{"subscriptionTimestamp":"`+coreT0.Format(time.RFC3339)+`"}`, 200, nil)
	c.op("POST", "/api/v1/lease/"+leaseID+"/extend", `{"seconds":1}`, 200, nil)
	c.op("POST", "/api/v1/lease/00000000-0000-0000-0000-000000000000/extend", "", 404, nil)
	var dlq api.DeadLetterList
	c.call("GET", "/api/v1/dlq", oaToken, "", 200, &dlq)
	if len(dlq.Messages) == 0 {
		c.t.Fatal("no dead letter to replay")
	}
	c.op("POST", "/api/v1/dlq/"+url.PathEscape(dlq.Messages[0].ID)+"/replay", "", 200, nil)
	c.op("POST", "/api/v1/dlq/"+url.PathEscape(dlq.Messages[0].ID)+"/replay", "", 404, nil)
	c.call("POST", "/api/v1/ack", oaToken, `{"transactionId":"x","partitionId":"y","status":"dlq","consumerGroup":"billing"}`, 200, nil)
	c.op("DELETE", "/api/v1/dlq/999999", "", 404, nil)
	c.op("DELETE", "/api/v1/messages/"+dlq.Messages[0].PartitionID+"/t1", "", 409, nil)
	c.op("DELETE", "/api/v1/consumer-groups/late/queues/orders", "", 200, nil)
	c.op("DELETE", "/api/v1/consumer-groups/holder?deleteMetadata=false", "", 200, nil)
	c.op("DELETE", "/api/v1/resources/queues/audit", "", 200, nil)
}

// oaTiers gives a queue a tier and a required group, moves its message to
// the held area (a week later on the test clock), leaves a shorter tier
// waiting on another queue, and confirms it: the tier views, the test
// routes and the history hold rows of each kind.
func oaTiers(c *oaClient) {
	c.op("POST", "/api/v1/configure", `{"queue":"tiered","options":{"retentionTier":"1w","requiredGroups":["audit"],"quarantined":"keep"}}`, 200, nil)
	c.call("POST", "/api/v1/push", oaToken, `{"items":[{"queue":"tiered","payload":1},{"queue":"shrink","payload":2}]}`, 201, nil)
	var conf api.ConfigureResponse
	c.call("POST", "/api/v1/configure", oaToken, `{"queue":"shrink","options":{"retentionTier":"7d"}}`, 200, &conf)
	if conf.RetentionChange == nil || conf.RetentionChange.State != "awaiting_confirm" {
		c.t.Fatalf("a shorter tier on a queue holding data: %+v, want a change awaiting confirmation", conf.RetentionChange)
	}
	c.call("GET", "/api/v1/retention/explain/shrink", oaToken, "", 200, nil)
	c.call("GET", "/api/v1/retention/explain/nope", oaToken, "", 404, nil)
	c.call("POST", "/api/v1/test/clock", oaToken, `{"advance":"200h"}`, 403, nil)
	c.op("POST", "/api/v1/test/clock", `{"advance":"-1h"}`, 400, nil)
	c.op("POST", "/api/v1/test/clock", `{"advance":"200h"}`, 200, nil)
	var run struct{ HeldMoved struct{ Frames int64 } }
	c.op("POST", "/api/v1/test/retention/run", "", 200, &run)
	if run.HeldMoved.Frames != 1 {
		c.t.Fatalf("the run moved %d messages to the held area, want tiered's one", run.HeldMoved.Frames)
	}
	var view api.RetentionView
	c.call("GET", "/api/v1/retention/tiers", oaToken, "", 200, &view)
	if len(view.Partitions) == 0 || len(view.Held) == 0 || len(view.Changes) == 0 {
		c.t.Fatalf("retention tiers: %+v, want partitions, a held month and a change", view)
	}
	c.call("POST", "/api/v1/retention/changes/shrink/confirm", oaToken, "", 403, nil)
	c.op("POST", "/api/v1/retention/changes/shrink/confirm", "", 200, nil)
	c.op("POST", "/api/v1/retention/changes/shrink/confirm", "", 404, nil)
	c.call("GET", "/api/v1/retention/history?rule=held_move", oaToken, "", 200, nil)
}

func oaJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

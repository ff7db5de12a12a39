package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/clock"
	"github.com/lethe-mq/lethe/internal/config"
	"github.com/lethe-mq/lethe/internal/testkit"
	"github.com/lethe-mq/lethe/internal/testserver"
)

// adminT0 is where the fake clock of admin tests starts.
var adminT0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// adminClient talks to a test replica over real HTTP.
type adminClient struct {
	t     *testing.T
	base  string
	token string
	clock *clock.Fake
	srv   *testserver.Server
}

// setupAdmin starts a replica on a fake clock; cfg may set auth tokens.
func setupAdmin(t *testing.T, cfg func(*config.Server)) *adminClient {
	t.Helper()
	t.Parallel()
	fake := clock.NewFake(adminT0)
	s := testserver.Start(t, testserver.Options{Clock: fake, Config: cfg})
	return &adminClient{t: t, base: s.URL, clock: fake, srv: s}
}

// do sends a request and returns the status and body.
func (c *adminClient) do(method, path string, body any) (int, []byte) {
	c.t.Helper()
	return testkit.Do(c.t, method, c.base+path, c.token, body)
}

// call sends a request, requires status want and decodes the body into out.
func (c *adminClient) call(method, path string, body any, want int, out any) {
	c.t.Helper()
	status, raw := c.do(method, path, body)
	if status != want {
		c.t.Fatalf("%s %s = %d, want %d; body: %s", method, path, status, want, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			c.t.Fatalf("%s %s: decode %s: %v", method, path, raw, err)
		}
	}
}

// fails requires a 4xx answer with an error message and returns it.
func (c *adminClient) fails(method, path string, body any, want int) string {
	c.t.Helper()
	var e api.Error
	c.call(method, path, body, want, &e)
	if e.Error == "" {
		c.t.Fatalf("%s %s: error body has no message", method, path)
	}
	return e.Error
}

func (c *adminClient) configure(queue string, options string) {
	c.t.Helper()
	c.call("POST", "/api/v1/configure", fmt.Sprintf(`{"queue":%q,"options":%s}`, queue, options), http.StatusOK, nil)
}

func (c *adminClient) push(queue, partition, txn string, payload any) api.PushResult {
	c.t.Helper()
	raw, _ := json.Marshal(payload)
	var res []api.PushResult
	c.call("POST", "/api/v1/push", api.PushRequest{Items: []api.PushItem{{Queue: queue, Partition: partition,
		TransactionID: txn, Payload: raw}}}, http.StatusCreated, &res)
	return res[0]
}

// pushNumbered pushes {"n":0} to {"n":count-1} to queue/partition, one
// request each: each message is a segment of its own.
func (c *adminClient) pushNumbered(queue, partition string, count int) {
	c.t.Helper()
	for i := range count {
		c.push(queue, partition, "", map[string]int{"n": i})
	}
}

// sweep runs one retention cycle and requires it to delete frames frames.
func (c *adminClient) sweep(frames int64) {
	c.t.Helper()
	res, err := c.srv.Retention.RunCycle(context.Background())
	if err != nil || res.Retention.Frames != frames {
		c.t.Fatalf("retention cycle: %+v, %v; want %d frames deleted", res.Retention, err, frames)
	}
}

// pop pops up to batch messages for group (queue mode when empty); it
// returns nil when nothing is available.
func (c *adminClient) pop(queue, partition, group string, batch int) []api.Message {
	c.t.Helper()
	path := "/api/v1/pop/queue/" + url.PathEscape(queue)
	if partition != "" {
		path += "/partition/" + url.PathEscape(partition)
	}
	q := url.Values{"batch": {fmt.Sprint(batch)}, "wait": {"false"}}
	if group != "" {
		q.Set("consumerGroup", group)
	}
	status, raw := c.do("GET", path+"?"+q.Encode(), nil)
	switch status {
	case http.StatusNoContent:
		return nil
	case http.StatusOK:
		var resp api.PopResponse
		if err := json.Unmarshal(raw, &resp); err != nil {
			c.t.Fatal(err)
		}
		return resp.Messages
	}
	c.t.Fatalf("pop %s = %d: %s", path, status, raw)
	return nil
}

func (c *adminClient) ack(m api.Message, group, status, reason string) api.AckResult {
	c.t.Helper()
	var res api.AckResult
	c.call("POST", "/api/v1/ack", api.AckRequest{TransactionID: m.TransactionID, PartitionID: m.PartitionID,
		LeaseID: m.LeaseID, Status: status, ConsumerGroup: group, Error: reason}, http.StatusOK, &res)
	if !res.Success {
		c.t.Fatalf("ack %s %s: %s", m.TransactionID, status, res.Error)
	}
	return res
}

// adminPayloads lists the "n" field of each message's data.
func adminPayloads(t *testing.T, msgs []api.Message) []int {
	t.Helper()
	out := make([]int, len(msgs))
	for i, m := range msgs {
		var d struct{ N int }
		if err := json.Unmarshal(m.Data, &d); err != nil {
			t.Fatalf("message data %s: %v", m.Data, err)
		}
		out[i] = d.N
	}
	return out
}

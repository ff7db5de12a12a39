package tiertest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/lethe-mq/lethe/client/api"
)

// client is a minimal HTTP client of one replica.
type client struct {
	t     *testing.T
	url   string
	token string
	// operator is the token of the test routes (operator role) when auth
	// is on.
	operator string
}

// asOperator runs f with the operator token.
func (c *client) asOperator(f func()) {
	if c.operator == "" {
		f()
		return
	}
	saved := c.token
	c.token = c.operator
	defer func() { c.token = saved }()
	f()
}

// do sends a request and requires the status; out, when not nil, gets the
// JSON answer.
func (c *client) do(method, path, body string, status int, out any) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.url+path, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != status {
		c.t.Fatalf("%s %s answered %d %s, want %d", method, path, resp.StatusCode, raw, status)
	}
	if out != nil && len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			c.t.Fatalf("%s %s: %v in %s", method, path, err, raw)
		}
	}
}

func (c *client) advance(d string) {
	c.t.Helper()
	c.asOperator(func() { c.do("POST", "/api/v1/test/clock", `{"advance":"`+d+`"}`, 200, nil) })
}

// run runs one full retention cycle and requires it to have no failure.
func (c *client) run() api.RetentionRun {
	c.t.Helper()
	var r api.RetentionRun
	c.asOperator(func() { c.do("POST", "/api/v1/test/retention/run", "", 200, &r) })
	if len(r.Failures) > 0 {
		c.t.Fatalf("retention run failed: %v", r.Failures)
	}
	return r
}

func (c *client) pop(queue, group string, batch int) []api.Message {
	c.t.Helper()
	var resp api.PopResponse
	path := "/api/v1/pop/queue/" + queue + "?consumerGroup=" + group + "&batch=" + itoa(batch)
	req, _ := http.NewRequest("GET", c.url+path, nil)
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer r.Body.Close()
	if r.StatusCode == http.StatusNoContent {
		return nil
	}
	if r.StatusCode != 200 {
		raw, _ := io.ReadAll(r.Body)
		c.t.Fatalf("pop answered %d %s", r.StatusCode, raw)
	}
	if err := json.NewDecoder(r.Body).Decode(&resp); err != nil {
		c.t.Fatal(err)
	}
	return resp.Messages
}

func (c *client) ack(m api.Message, status string) {
	c.t.Helper()
	body, _ := json.Marshal(api.AckRequest{TransactionID: m.TransactionID, PartitionID: m.PartitionID, LeaseID: m.LeaseID,
		Status: status, ConsumerGroup: m.ConsumerGroup, Error: "tiertest"})
	var res api.AckResult
	c.do("POST", "/api/v1/ack", string(body), 200, &res)
	if !res.Success {
		c.t.Fatalf("ack %s of %s: %s", status, m.TransactionID, res.Error)
	}
}

// consume pops and acks until n messages were read (0: one pop, which
// subscribes the group), and answers their payloads in order.
func (c *client) consume(queue, group string, n int) []string {
	c.t.Helper()
	var out []string
	for range 1000 {
		msgs := c.pop(queue, group, max(1, min(100, n-len(out))))
		for _, m := range msgs {
			out = append(out, string(m.Data))
			c.ack(m, "completed")
		}
		if len(out) >= n || (len(msgs) == 0 && n == 0) {
			return out
		}
		if len(msgs) == 0 {
			c.t.Fatalf("group %s read %d of %d messages: %v", group, len(out), n, out)
		}
	}
	c.t.Fatal("still popping after 1000 rounds")
	return nil
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

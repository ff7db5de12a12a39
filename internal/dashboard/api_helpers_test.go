package dashboard_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/cli"
)

const (
	plainToken    = "reader-token"
	operatorToken = "operator-token"
)

// apiClient speaks to the replica as the test's own eyes: the figures the
// dashboard shows are compared with what it answers.
type apiClient struct {
	t   *testing.T
	url string
}

func (c *apiClient) call(method, path, body string, want int, out any) {
	c.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, c.url+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+operatorToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		c.t.Fatalf("%s %s: %d %s, want %d", method, path, resp.StatusCode, b, want)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			c.t.Fatalf("%s %s: decode %s: %v", method, path, b, err)
		}
	}
}

func (c *apiClient) get(path string, out any) {
	c.t.Helper()
	c.call("GET", path, "", http.StatusOK, out)
}

func asJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func (c *apiClient) push(items ...api.PushItem) {
	c.t.Helper()
	c.call("POST", "/api/v1/push", asJSON(api.PushRequest{Items: items}), http.StatusCreated, nil)
}

// pop leases up to batch messages of queue/partition for group.
func (c *apiClient) pop(queue, partition, group string, batch int) []api.Message {
	c.t.Helper()
	var p api.PopResponse
	path := "/api/v1/pop/queue/" + queue + "/partition/" + partition + "?consumerGroup=" + group + "&batch=" + itoa(batch)
	req, _ := http.NewRequestWithContext(context.Background(), "GET", c.url+path, nil)
	req.Header.Set("Authorization", "Bearer "+plainToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNoContent {
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(&p); err != nil || resp.StatusCode != http.StatusOK {
		c.t.Fatalf("pop %s: %d %v", path, resp.StatusCode, err)
	}
	return p.Messages
}

func (c *apiClient) ack(m api.Message, group, status, why string) {
	c.t.Helper()
	var res api.AckResult
	c.call("POST", "/api/v1/ack", asJSON(api.AckRequest{TransactionID: m.TransactionID, PartitionID: m.PartitionID,
		LeaseID: m.LeaseID, Status: status, ConsumerGroup: group, Error: why}), http.StatusOK, &res)
	if !res.Success {
		c.t.Fatalf("ack %s %s: %+v", m.TransactionID, status, res)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// lethe runs the CLI in-process, as a user would type it.
func lethe(t *testing.T, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	root := cli.NewRoot(&out, &errOut)
	root.SetArgs(args)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := root.ExecuteContext(ctx); err != nil {
		t.Fatalf("lethe %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errOut.String())
	}
	return out.String()
}

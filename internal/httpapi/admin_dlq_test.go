package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/client/api"
)

type dlqPage struct {
	Messages []api.DeadLetter `json:"messages"`
	Total    int64            `json:"total"`
}

// deadLetterOne drives one message of queue "q" into g's dead letters:
// retryLimit 1, so the second failed ack gives up on it.
func deadLetterOne(t *testing.T, c *adminClient, n int) {
	t.Helper()
	c.configure("q", `{"retryLimit": 1}`)
	c.push("q", "p", "", map[string]int{"n": n})
	for attempt := range 2 {
		msgs := c.pop("q", "p", "g", 1)
		if len(msgs) != 1 {
			t.Fatalf("attempt %d: pop got %d messages, want 1", attempt, len(msgs))
		}
		res := c.ack(msgs[0], "g", "failed", "boom")
		if res.DLQ != (attempt == 1) {
			t.Fatalf("attempt %d: ack dlq = %v", attempt, res.DLQ)
		}
		// Past any retryDelay before the redelivery.
		c.clock.Advance(time.Minute)
	}
}

func TestAdminDeadLettersListAndReplay(t *testing.T) {
	c := setupAdmin(t, nil)
	deadLetterOne(t, c, 7)
	if got := c.pop("q", "p", "g", 1); got != nil {
		t.Fatalf("g moved past its dead letter, yet pop got %v", adminPayloads(t, got))
	}

	var page dlqPage
	c.call("GET", "/api/v1/dlq?queue=q&consumerGroup=g", nil, http.StatusOK, &page)
	if page.Total != 1 || len(page.Messages) != 1 {
		t.Fatalf("dlq = %+v, want one dead letter", page)
	}
	d := page.Messages[0]
	if d.Queue != "q" || d.Partition != "p" || d.ConsumerGroup != "g" || d.ErrorMessage != "boom" || d.RetryCount != 2 ||
		string(d.Data) != `{"n":7}` || !d.CreatedAt.Equal(adminT0) || !d.FailedAt.Equal(adminT0.Add(time.Minute)) {
		t.Fatalf("dead letter = %+v", d)
	}
	// Filters that exclude it still count what matches: nothing.
	for _, q := range []string{"consumerGroup=other", "partition=zz", "from=2031-01-01", "to=2029-12-31",
		"to=" + adminT0.Format(time.RFC3339)} {
		c.call("GET", "/api/v1/dlq?queue=q&"+q, nil, http.StatusOK, &page)
		if page.Total != 0 || len(page.Messages) != 0 {
			t.Fatalf("dlq with %s = %+v, want none", q, page)
		}
	}
	// A bare date as the upper bound includes its whole day; total counts
	// beyond the page.
	c.call("GET", "/api/v1/dlq?to=2030-01-02&limit=1&offset=1", nil, http.StatusOK, &page)
	if page.Total != 1 || len(page.Messages) != 0 {
		t.Fatalf("dlq page 2 = %+v, want total 1 and no rows", page)
	}
	c.fails("GET", "/api/v1/dlq?queue=nope", nil, http.StatusNotFound)
	c.fails("GET", "/api/v1/dlq?from=last-week", nil, http.StatusBadRequest)
	c.fails("GET", "/api/v1/dlq?limit=0", nil, http.StatusBadRequest)

	var replayed api.DeadLetterReplayed
	c.call("POST", "/api/v1/dlq/"+d.ID+"/replay", nil, http.StatusOK, &replayed)
	if replayed.Queue != "q" || replayed.Partition != "p" || replayed.TransactionID == d.TransactionID || replayed.Offset != 1 {
		t.Fatalf("replay = %+v, want a new transaction at offset 1 of q/p", replayed)
	}
	msgs := c.pop("q", "p", "g", 10)
	if got := adminPayloads(t, msgs); !slices.Equal(got, []int{7}) || msgs[0].TransactionID != replayed.TransactionID {
		t.Fatalf("pop after replay = %v, want the replayed message", got)
	}
	c.call("GET", "/api/v1/dlq", nil, http.StatusOK, &page)
	if page.Total != 0 {
		t.Fatalf("replay left the dead letter behind: %+v", page)
	}
	c.fails("POST", "/api/v1/dlq/"+d.ID+"/replay", nil, http.StatusNotFound)
	c.fails("POST", "/api/v1/dlq/abc/replay", nil, http.StatusBadRequest)
	c.fails("POST", "/api/v1/dlq/0/replay", nil, http.StatusBadRequest)
}

func TestAdminDeadLetterDelete(t *testing.T) {
	c := setupAdmin(t, nil)
	deadLetterOne(t, c, 1)
	var page dlqPage
	c.call("GET", "/api/v1/dlq", nil, http.StatusOK, &page)
	if len(page.Messages) != 1 {
		t.Fatalf("dlq = %+v", page)
	}
	var res map[string]any
	c.call("DELETE", "/api/v1/dlq/"+page.Messages[0].ID, nil, http.StatusOK, &res)
	if res["success"] != true {
		t.Fatalf("delete = %v", res)
	}
	c.call("GET", "/api/v1/dlq", nil, http.StatusOK, &page)
	if page.Total != 0 {
		t.Fatalf("dead letter still listed after delete: %+v", page)
	}
	c.fails("DELETE", "/api/v1/dlq/999999", nil, http.StatusNotFound)
	c.fails("DELETE", "/api/v1/dlq/-3", nil, http.StatusBadRequest)
}

// A dead letter whose segment was gone when it failed has no payload: a
// replay has nothing to push and says so.
func TestAdminReplayWithoutPayload(t *testing.T) {
	c := setupAdmin(t, nil)
	res := c.push("q", "p", "", map[string]int{"n": 1})
	var id int64
	if err := c.srv.Pool.QueryRow(context.Background(), `
		INSERT INTO lethe.dead_letters (partition_id, group_name, msg_offset, txn_id, payload, retry_count, created_at, failed_at)
		VALUES ($1, 'g', 0, $2, NULL, 1, now(), now()) RETURNING id`, res.PartitionID, res.TransactionID).Scan(&id); err != nil {
		t.Fatal(err)
	}
	msg := c.fails("POST", fmt.Sprintf("/api/v1/dlq/%d/replay", id), nil, http.StatusConflict)
	if !strings.Contains(msg, "no payload") {
		t.Fatalf("refusal %q should say the payload is missing", msg)
	}
	var page dlqPage
	c.call("GET", "/api/v1/dlq", nil, http.StatusOK, &page)
	if page.Total != 1 || string(page.Messages[0].Data) != "null" {
		t.Fatalf("dlq = %+v, want the dead letter kept, data null", page)
	}
}

// The DLQ answer is what Queen's client parses.
func TestAdminDeadLetterWireShape(t *testing.T) {
	c := setupAdmin(t, nil)
	deadLetterOne(t, c, 3)
	_, raw := c.do("GET", "/api/v1/dlq?queue=q", nil)
	var body struct {
		Messages []map[string]any `json:"messages"`
		Total    float64          `json:"total"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatal(err)
	}
	m := body.Messages[0]
	for _, k := range []string{"id", "transactionId", "partitionId", "partition", "queue", "consumerGroup", "data",
		"errorMessage", "retryCount", "createdAt", "failedAt"} {
		if _, ok := m[k]; !ok {
			t.Errorf("dead letter lacks %q: %s", k, raw)
		}
	}
	if _, ok := m["data"].(map[string]any); !ok || body.Total != 1 {
		t.Fatalf("data must be the JSON object and total a number: %s", raw)
	}
}

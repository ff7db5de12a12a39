package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/client/api"
)

func offsetsOf(page api.MessagePage) []int64 {
	out := make([]int64, len(page.Messages))
	for i, m := range page.Messages {
		out[i] = m.Offset
	}
	return out
}

func TestAdminBrowseMessages(t *testing.T) {
	c := setupAdmin(t, nil)
	for i := range 3 {
		c.push("q", "p", "", map[string]int{"n": i})
		c.clock.Advance(time.Minute)
	}
	c.push("q", "other", "", map[string]int{"n": 9})
	// g finishes offset 0 and holds a lease on offset 1.
	m := c.pop("q", "p", "g", 1)
	c.ack(m[0], "g", "completed", "")
	c.pop("q", "p", "g", 1)

	var page api.MessagePage
	c.call("GET", "/api/v1/messages?queue=q&partition=p", nil, http.StatusOK, &page)
	if got := offsetsOf(page); len(got) != 3 || got[0] != 2 || got[1] != 1 || got[2] != 0 {
		t.Fatalf("browse offsets = %v, want newest first [2 1 0]", got)
	}
	wantStatus := []string{api.MessagePending, api.MessageProcessing, api.MessageCompleted}
	for i, msg := range page.Messages {
		if msg.Status != wantStatus[i] || msg.ConsumerGroups["g"] != wantStatus[i] || msg.Queue != "q" || msg.Partition != "p" {
			t.Fatalf("message %d = %+v, want status %s for g", msg.Offset, msg, wantStatus[i])
		}
	}
	if !page.Messages[2].CreatedAt.Equal(adminT0) {
		t.Fatalf("createdAt = %s, want %s", page.Messages[2].CreatedAt, adminT0)
	}

	cases := map[string][]int64{
		"queue=q&partition=p&status=completed":                     {0},
		"queue=q&partition=p&status=processing":                    {1},
		"queue=q&partition=p&limit=1&offset=1":                     {1},
		"queue=q&partition=p&from=" + at(adminT0.Add(time.Minute)): {2, 1},
		"queue=q&partition=p&to=" + at(adminT0.Add(time.Minute)):   {1, 0},
	}
	for q, want := range cases {
		c.call("GET", "/api/v1/messages?"+q, nil, http.StatusOK, &page)
		if got := offsetsOf(page); !equalOffsets(got, want) {
			t.Errorf("browse %s = %v, want %v", q, got, want)
		}
	}
	// Across the queue: both partitions, newest segments first.
	c.call("GET", "/api/v1/messages?queue=q", nil, http.StatusOK, &page)
	if len(page.Messages) != 4 || page.Messages[0].Partition != "other" {
		t.Fatalf("queue-wide browse = %+v, want 4 with other's (newest) first", page.Messages)
	}

	c.fails("GET", "/api/v1/messages?queue=q&status=lost", nil, http.StatusBadRequest)
	c.fails("GET", "/api/v1/messages?partition=p", nil, http.StatusBadRequest)
	c.fails("GET", "/api/v1/messages?queue=nope", nil, http.StatusNotFound)
	c.fails("GET", "/api/v1/messages?queue=q&partition=nope", nil, http.StatusNotFound)
	c.fails("GET", "/api/v1/messages?limit=10001", nil, http.StatusBadRequest)
	c.fails("GET", "/api/v1/messages?from=soon", nil, http.StatusBadRequest)
}

func at(t time.Time) string { return url.QueryEscape(t.Format(time.RFC3339)) }

func equalOffsets(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestAdminGetMessage(t *testing.T) {
	c := setupAdmin(t, nil)
	res := c.push("q", "p", "order-42", map[string]string{"hello": "world"})
	path := "/api/v1/messages/" + res.PartitionID + "/order-42"

	var m api.MessageDetail
	c.call("GET", path, nil, http.StatusOK, &m)
	var payload map[string]string
	if err := json.Unmarshal(m.Payload, &payload); err != nil || payload["hello"] != "world" {
		t.Fatalf("payload = %s (%v)", m.Payload, err)
	}
	if m.ID != res.MessageID || m.Queue != "q" || m.Partition != "p" || m.Offset != 0 || m.Status != api.MessagePending {
		t.Fatalf("message = %+v", m)
	}
	// Once a group is done with it, it is completed.
	msgs := c.pop("q", "p", "g", 1)
	c.ack(msgs[0], "g", "completed", "")
	c.call("GET", path, nil, http.StatusOK, &m)
	if m.Status != api.MessageCompleted {
		t.Fatalf("status after ack = %s, want completed", m.Status)
	}

	c.fails("GET", "/api/v1/messages/"+res.PartitionID+"/no-such-txn", nil, http.StatusNotFound)
	c.fails("GET", "/api/v1/messages/not-a-uuid/order-42", nil, http.StatusBadRequest)
	c.fails("GET", "/api/v1/messages/00000000-0000-0000-0000-000000000000/order-42", nil, http.StatusNotFound)

	msg := c.fails("DELETE", path, nil, http.StatusConflict)
	if !strings.Contains(msg, "segment") || !strings.Contains(msg, "seek") {
		t.Fatalf("delete refusal %q should explain segments and suggest a seek", msg)
	}
	c.call("GET", path, nil, http.StatusOK, nil)
}

func TestAdminBrowseDeadMessage(t *testing.T) {
	c := setupAdmin(t, nil)
	deadLetterOne(t, c, 5)
	var page api.MessagePage
	c.call("GET", "/api/v1/messages?queue=q&status=dead", nil, http.StatusOK, &page)
	if len(page.Messages) != 1 || page.Messages[0].ConsumerGroups["g"] != api.MessageDead {
		t.Fatalf("dead browse = %+v, want the dead-lettered message", page.Messages)
	}
	var m api.MessageDetail
	c.call("GET", "/api/v1/messages/"+page.Messages[0].PartitionID+"/"+page.Messages[0].TransactionID, nil, http.StatusOK, &m)
	if m.Status != api.MessageDead || m.ErrorMessage != "boom" || m.RetryCount != 2 {
		t.Fatalf("dead message = %+v", m)
	}
}

// Browsing walks segments in batches; more segments than one batch must
// come out whole and in order, across partitions and within one.
func TestAdminBrowseManySegments(t *testing.T) {
	c := setupAdmin(t, nil)
	items := make([]api.PushItem, 250)
	for i := range items {
		items[i] = api.PushItem{Queue: "wide", Partition: fmt.Sprint("p", i), Payload: json.RawMessage(`1`)}
	}
	c.call("POST", "/api/v1/push", api.PushRequest{Items: items}, http.StatusCreated, nil)
	var page api.MessagePage
	c.call("GET", "/api/v1/messages?queue=wide&limit=1000", nil, http.StatusOK, &page)
	seen := map[string]bool{}
	for _, m := range page.Messages {
		seen[m.Partition] = true
	}
	if len(page.Messages) != 250 || len(seen) != 250 || page.Truncated {
		t.Fatalf("queue-wide browse found %d messages in %d partitions (truncated %v), want 250 in 250",
			len(page.Messages), len(seen), page.Truncated)
	}

	const n = 205 // one segment each: more than a batch (200)
	for i := range n {
		c.push("deep", "p", "", map[string]int{"n": i})
	}
	c.call("GET", "/api/v1/messages?queue=deep&partition=p&limit=1000", nil, http.StatusOK, &page)
	if len(page.Messages) != n {
		t.Fatalf("partition browse found %d messages, want %d", len(page.Messages), n)
	}
	for i, m := range page.Messages {
		if m.Offset != int64(n-1-i) {
			t.Fatalf("message %d has offset %d, want %d (newest first)", i, m.Offset, n-1-i)
		}
	}
}

package httpapi_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/client/api"
)

// A group's time to loss is when the sweep deletes its oldest unread
// message: a cycle at lossAt deletes nothing of it, the first one after
// does, and the figure then moves to the next unread message. Leased
// messages count as unread; a group with nothing unread, or on a queue
// whose rules delete no unread data, has no loss time. The shorter of
// retentionSeconds and maxWaitTimeSeconds wins.
func TestTimeToLoss(t *testing.T) {
	c := setupAdmin(t, nil)
	c.configure("ttl", `{"retentionEnabled":true,"retentionSeconds":3600}`)
	c.configure("keep", `{}`)
	c.push("ttl", "a", "", 0) // offset 0 at T0
	c.clock.Advance(10 * time.Minute)
	c.push("ttl", "a", "", 1) // offset 1 at T0+10m
	c.push("keep", "a", "", 0)
	c.ack(c.pop("ttl", "", "fast", 1)[0], "fast", "completed", "")
	c.pop("ttl", "", "slow", 1) // leased, not acked: still unread
	for _, m := range c.pop("ttl", "", "done", 2) {
		c.ack(m, "done", "completed", "")
	}
	c.pop("keep", "", "slow", 1)
	c.clock.Advance(20 * time.Minute) // T0+30m

	lossOf := func(group, queue string) (api.TimeToLoss, []api.GroupPartition) {
		t.Helper()
		var detail map[string]api.GroupQueue
		c.call("GET", "/api/v1/consumer-groups/"+group, nil, http.StatusOK, &detail)
		q, ok := detail[queue]
		if !ok {
			t.Fatalf("group %s has no entry for queue %s: %+v", group, queue, detail)
		}
		return q.TimeToLoss, q.Partitions
	}
	want := func(group, queue string, rule string, at time.Time, secs int64) {
		t.Helper()
		got, parts := lossOf(group, queue)
		if got.LossRule == nil || *got.LossRule != rule {
			t.Fatalf("%s on %s: lossRule %s, want %s", group, queue, orNull(got.LossRule), rule)
		}
		if at.IsZero() {
			if got.LossAt != nil || got.TimeToLossSeconds != nil {
				t.Fatalf("%s on %s: lossAt %v, timeToLossSeconds %v, want none (nothing unread)", group, queue, got.LossAt, got.TimeToLossSeconds)
			}
			return
		}
		if got.LossAt == nil || !got.LossAt.Equal(at) || got.TimeToLossSeconds == nil || *got.TimeToLossSeconds != secs {
			t.Fatalf("%s on %s: lossAt %v, timeToLossSeconds %v, want %s and %d", group, queue, got.LossAt, got.TimeToLossSeconds, at, secs)
		}
		if len(parts) != 1 || parts[0].LossAt == nil || !parts[0].LossAt.Equal(at) {
			t.Fatalf("%s on %s: partition rows %+v, want partition a lost at %s", group, queue, parts, at)
		}
	}
	want("slow", "ttl", "retentionSeconds", adminT0.Add(time.Hour), 1800)
	want("fast", "ttl", "retentionSeconds", adminT0.Add(70*time.Minute), 2400)
	want("done", "ttl", "retentionSeconds", time.Time{}, 0)
	if got, _ := lossOf("slow", "keep"); got.LossRule != nil || got.LossAt != nil || got.TimeToLossSeconds != nil {
		t.Fatalf("slow on keep (no deleting rule) = %+v, want all null", got)
	}

	// The list and the queue status say the same.
	var list []api.GroupSummary
	c.call("GET", "/api/v1/consumer-groups", nil, http.StatusOK, &list)
	var status api.QueueDetail
	c.call("GET", "/api/v1/status/queues/ttl", nil, http.StatusOK, &status)
	for _, g := range list {
		if g.QueueName == "ttl" && g.Name == "slow" && (g.TimeToLossSeconds == nil || *g.TimeToLossSeconds != 1800) {
			t.Fatalf("list: slow on ttl = %+v, want 1800 s to loss", g.TimeToLoss)
		}
	}
	for _, g := range status.ConsumerGroups {
		if g.Name == "slow" && (g.TimeToLossSeconds == nil || *g.TimeToLossSeconds != 1800) {
			t.Fatalf("status: slow = %+v, want 1800 s to loss", g.TimeToLoss)
		}
	}

	// A cycle at lossAt deletes nothing; the first after it deletes the
	// segment, as a loss of slow's and not of fast's.
	c.clock.Set(adminT0.Add(time.Hour))
	want("slow", "ttl", "retentionSeconds", adminT0.Add(time.Hour), 0)
	c.sweep(0)
	c.clock.Advance(time.Second)
	c.sweep(1) // offset 0
	var hist api.RetentionHistory
	c.call("GET", "/api/v1/retention/history?queue=ttl", nil, http.StatusOK, &hist)
	lost := map[string]int64{}
	for _, d := range hist.Entries {
		for _, l := range d.Lost {
			lost[l.Group] += l.Messages
		}
	}
	if len(lost) != 1 || lost["slow"] != 1 {
		t.Fatalf("losses recorded %v, want slow's 1 message only", lost)
	}
	want("slow", "ttl", "retentionSeconds", adminT0.Add(70*time.Minute), 599)

	// maxWaitTimeSeconds shorter than retentionSeconds: it decides.
	c.configure("ttl", `{"retentionEnabled":true,"retentionSeconds":3600,"maxWaitTimeSeconds":1200}`)
	want("slow", "ttl", "maxWaitTimeSeconds", adminT0.Add(30*time.Minute), 0)
}

func orNull(s *string) string {
	if s == nil {
		return "null"
	}
	return *s
}

package httpapi_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/version"
)

// statusFixture: two queues in namespace "billing" (tasks "invoice" and
// "refund"), one outside; three messages on invoices, one dead letter on q.
func statusFixture(t *testing.T) *adminClient {
	c := setupAdmin(t, nil)
	c.call("POST", "/api/v1/configure", `{"queue":"invoices","namespace":"billing","task":"invoice"}`, http.StatusOK, nil)
	c.call("POST", "/api/v1/configure", `{"queue":"refunds","namespace":"billing","task":"refund"}`, http.StatusOK, nil)
	c.push("invoices", "a", "", map[string]int{"n": 1})
	c.push("invoices", "a", "", map[string]int{"n": 2})
	c.push("invoices", "b", "", map[string]int{"n": 3})
	m := c.pop("invoices", "a", "acct", 1)
	c.ack(m[0], "acct", "completed", "")
	deadLetterOne(t, c, 4)
	return c
}

func TestAdminOverviewAndStatus(t *testing.T) {
	c := statusFixture(t)
	var o api.Overview
	c.call("GET", "/api/v1/resources/overview", nil, http.StatusOK, &o)
	if o.Queues != 3 || o.Partitions != 3 || o.Namespaces != 1 || o.Tasks != 2 || o.ConsumerGroups != 2 ||
		o.Messages.Total != 4 || o.DeadLetters != 1 || o.Bytes <= 0 {
		t.Fatalf("overview = %+v, want 3 queues, 3 partitions, 1 namespace, 2 tasks, 2 groups, 4 messages, 1 dead letter", o)
	}

	var st struct {
		Version       string `json:"version"`
		UptimeSeconds int64  `json:"uptimeSeconds"`
		Queues        int64  `json:"queues"`
		Time          time.Time
	}
	c.call("GET", "/api/v1/status", nil, http.StatusOK, &st)
	if st.Version != "lethe "+version.String() || st.Queues != 3 || st.UptimeSeconds < 0 || st.Time.Before(adminT0) {
		t.Fatalf("status = %+v", st)
	}

	var ns struct {
		Namespaces []api.TagSummary `json:"namespaces"`
		Total      int64            `json:"total"`
	}
	c.call("GET", "/api/v1/resources/namespaces", nil, http.StatusOK, &ns)
	if ns.Total != 1 || len(ns.Namespaces) != 1 || ns.Namespaces[0].Namespace != "billing" ||
		ns.Namespaces[0].Queues != 2 || ns.Namespaces[0].Messages.Total != 3 {
		t.Fatalf("namespaces = %+v, want billing with 2 queues and 3 messages", ns)
	}
	var tasks struct {
		Tasks []api.TagSummary `json:"tasks"`
		Total int64            `json:"total"`
	}
	c.call("GET", "/api/v1/resources/tasks?limit=1&offset=1", nil, http.StatusOK, &tasks)
	if tasks.Total != 2 || len(tasks.Tasks) != 1 || tasks.Tasks[0].Task != "refund" {
		t.Fatalf("tasks page 2 = %+v, want refund of 2", tasks)
	}
	c.fails("GET", "/api/v1/resources/tasks?limit=-1", nil, http.StatusBadRequest)
	c.fails("GET", "/api/v1/resources/namespaces?offset=x", nil, http.StatusBadRequest)
}

func TestAdminQueueStatus(t *testing.T) {
	c := statusFixture(t)
	var list struct {
		Queues []api.QueueStatus `json:"queues"`
		Total  int64             `json:"total"`
	}
	c.call("GET", "/api/v1/status/queues?namespace=billing", nil, http.StatusOK, &list)
	if list.Total != 2 || len(list.Queues) != 2 || list.Queues[0].Name != "invoices" {
		t.Fatalf("billing queues = %+v", list)
	}
	inv := list.Queues[0]
	if inv.Partitions != 2 || inv.Messages.Total != 3 || inv.Bytes <= 0 || len(inv.ConsumerGroups) != 1 {
		t.Fatalf("invoices = %+v, want 2 partitions, 3 messages, one group", inv)
	}
	if g := inv.ConsumerGroups[0]; g.Name != "acct" || g.TotalLag != 2 || g.Members != 1 {
		t.Fatalf("acct on invoices = %+v, want lag 2 (1 on a, 1 on b not started)", g)
	}

	var d api.QueueDetail
	c.call("GET", "/api/v1/status/queues/invoices?includePartitions=true", nil, http.StatusOK, &d)
	if d.Queue.Name != "invoices" || d.Totals.Total != 3 || d.Totals.Partitions != 2 || len(d.Partitions) != 2 {
		t.Fatalf("invoices detail = %+v", d)
	}
	a := d.Partitions[0]
	if a.Name != "a" || a.NextOffset != 2 || a.LowWatermark != 0 || a.Messages.Total != 2 || a.Segments != 2 ||
		a.Bytes <= 0 || len(a.ConsumerGroups) != 1 {
		t.Fatalf("partition a = %+v", a)
	}
	if g := a.ConsumerGroups[0]; g.ConsumerGroup != "acct" || g.CommittedOffset == nil || *g.CommittedOffset != 0 || g.OffsetLag != 1 {
		t.Fatalf("acct on a = %+v, want committed 0, lag 1", g)
	}
	d = api.QueueDetail{}
	c.call("GET", "/api/v1/status/queues/q", nil, http.StatusOK, &d)
	if d.Totals.DeadLetter != 1 || d.Partitions != nil {
		t.Fatalf("q detail = %+v, want 1 dead letter and no partitions unless asked", d)
	}
	if len(d.ConsumerGroups) != 1 || d.ConsumerGroups[0].Name != "g" {
		t.Fatalf("q groups = %+v", d.ConsumerGroups)
	}

	c.fails("GET", "/api/v1/status/queues/nope", nil, http.StatusNotFound)
	c.fails("GET", "/api/v1/status/queues?includePartitions=true", nil, http.StatusBadRequest)
	c.fails("GET", "/api/v1/status/queues/invoices?includePartitions=perhaps", nil, http.StatusBadRequest)
	c.fails("GET", "/api/v1/status/queues?limit=100000", nil, http.StatusBadRequest)
}

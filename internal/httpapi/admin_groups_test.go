package httpapi_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/config"
)

func TestAdminConsumerGroupsListAndDetail(t *testing.T) {
	c := setupAdmin(t, nil)
	for i := range 3 {
		c.push("orders", "a", "", map[string]int{"n": i})
	}
	c.push("orders", "b", "", map[string]int{"n": 9})
	// Group g1 finishes the first message of a; queue mode holds a lease
	// on one partition.
	m := c.pop("orders", "a", "g1", 1)
	c.ack(m[0], "g1", "completed", "")
	if got := c.pop("orders", "", "", 1); len(got) != 1 {
		t.Fatalf("queue-mode pop got %d messages, want 1", len(got))
	}

	var list []api.GroupSummary
	c.call("GET", "/api/v1/consumer-groups", nil, http.StatusOK, &list)
	byName := map[string]api.GroupSummary{}
	for _, g := range list {
		byName[g.Name] = g
	}
	g1, qm := byName["g1"], byName[api.QueueModeGroup]
	if g1.QueueName != "orders" || g1.Partitions != 2 || g1.Members != 1 || g1.TotalLag != 3 || g1.LeasesHeld != 0 {
		t.Fatalf("g1 = %+v, want 2 partitions, 1 started, lag 3 (2 on a, 1 on b), no lease", g1)
	}
	if qm.TotalLag != 4 || qm.LeasesHeld != 1 || qm.State != "Stable" {
		t.Fatalf("queue mode = %+v, want lag 4 (leased is not done), 1 lease held, Stable", qm)
	}

	var detail map[string]api.GroupQueue
	c.call("GET", "/api/v1/consumer-groups/g1", nil, http.StatusOK, &detail)
	orders := detail["orders"]
	if len(orders.Partitions) != 2 || orders.PartitionCount != 2 {
		t.Fatalf("g1 detail = %+v, want partitions a and b", orders)
	}
	a, b := orders.Partitions[0], orders.Partitions[1]
	if a.Partition != "a" || a.CommittedOffset == nil || *a.CommittedOffset != 0 || a.NextOffset != 3 || a.OffsetLag != 2 {
		t.Fatalf("g1 on a = %+v, want committed 0 of next 3, lag 2", a)
	}
	if b.CommittedOffset != nil || b.OffsetLag != 1 {
		t.Fatalf("g1 on b = %+v, want not started (null committed) with lag 1", b)
	}
	// Paging the partition rows.
	c.call("GET", "/api/v1/consumer-groups/g1?limit=1&offset=1", nil, http.StatusOK, &detail)
	if p := detail["orders"].Partitions; len(p) != 1 || p[0].Partition != "b" {
		t.Fatalf("page 2 of g1's partitions = %+v, want only b", p)
	}

	c.fails("GET", "/api/v1/consumer-groups/nobody", nil, http.StatusNotFound)
	c.fails("GET", "/api/v1/consumer-groups?limit=0", nil, http.StatusBadRequest)
	c.fails("GET", "/api/v1/consumer-groups?limit=10001", nil, http.StatusBadRequest)
	c.fails("GET", "/api/v1/consumer-groups?offset=-1", nil, http.StatusBadRequest)
	c.fails("GET", "/api/v1/consumer-groups?limit=ten", nil, http.StatusBadRequest)
}

func TestAdminLaggingConsumerGroups(t *testing.T) {
	c := setupAdmin(t, nil)
	c.push("jobs", "p", "", map[string]int{"n": 1})
	c.push("jobs", "p", "", map[string]int{"n": 2})
	m := c.pop("jobs", "p", "slow", 1)
	c.ack(m[0], "slow", "completed", "")
	c.clock.Advance(2 * time.Hour)

	var rows []api.LaggingPartition
	c.call("GET", "/api/v1/consumer-groups/lagging?minLagSeconds=3600", nil, http.StatusOK, &rows)
	if len(rows) != 1 {
		t.Fatalf("lagging = %+v, want one row", rows)
	}
	r := rows[0]
	if r.ConsumerGroup != "slow" || r.QueueName != "jobs" || r.PartitionName != "p" || r.OffsetLag != 1 ||
		r.TimeLagSeconds != 7200 || r.OldestUnconsumedAt == nil || !r.OldestUnconsumedAt.Equal(adminT0) {
		t.Fatalf("lagging row = %+v, want slow on jobs/p: 1 message, 7200 s old, pushed at %s", r, adminT0)
	}
	c.call("GET", "/api/v1/consumer-groups/lagging?minLagSeconds=7200", nil, http.StatusOK, &rows)
	if len(rows) != 0 {
		t.Fatalf("lag must exceed minLagSeconds strictly; got %+v", rows)
	}
	c.fails("GET", "/api/v1/consumer-groups/lagging?minLagSeconds=-1", nil, http.StatusBadRequest)
	c.fails("GET", "/api/v1/consumer-groups/lagging?minLagSeconds=soon", nil, http.StatusBadRequest)
}

func TestAdminSeekToEnd(t *testing.T) {
	c := setupAdmin(t, nil)
	for i := range 3 {
		c.push("q", "p", "", map[string]int{"n": i})
	}
	// The group never popped: the seek creates its cursor at the end.
	var res api.SeekResult
	c.call("POST", "/api/v1/consumer-groups/g/queues/q/seek", `{"toEnd": true}`, http.StatusOK, &res)
	if !res.Success || res.PartitionsUpdated != 1 {
		t.Fatalf("seek = %+v, want one partition moved", res)
	}
	if got := c.pop("q", "", "g", 10); got != nil {
		t.Fatalf("after seeking to the end, pop got %v, want nothing", adminPayloads(t, got))
	}
	c.push("q", "p", "", map[string]int{"n": 3})
	if got := adminPayloads(t, c.pop("q", "", "g", 10)); !slices.Equal(got, []int{3}) {
		t.Fatalf("pop after a new push = %v, want [3]", got)
	}
	// Other groups are not moved.
	if got := adminPayloads(t, c.pop("q", "", "other", 10)); !slices.Equal(got, []int{0, 1, 2, 3}) {
		t.Fatalf("another group's pop = %v, want all four", got)
	}
}

func TestAdminSeekTimestamp(t *testing.T) {
	c := setupAdmin(t, nil)
	for i := range 3 {
		c.push("q", "p", "", map[string]int{"n": i})
		c.clock.Advance(time.Minute)
	}
	msgs := c.pop("q", "p", "g", 3)
	for _, m := range msgs {
		c.ack(m, "g", "completed", "")
	}
	if got := c.pop("q", "", "g", 10); got != nil {
		t.Fatalf("all acked, yet pop got %v", adminPayloads(t, got))
	}
	at := adminT0.Add(time.Minute).Format(time.RFC3339)
	c.call("POST", "/api/v1/consumer-groups/g/queues/q/seek", `{"timestamp": "`+at+`"}`, http.StatusOK, nil)
	held := c.pop("q", "", "g", 1)
	if got := adminPayloads(t, held); !slices.Equal(got, []int{1}) {
		t.Fatalf("pop after seeking to %s = %v, want [1]", at, got)
	}
	// Seeking drops the lease just taken: the same messages come again.
	c.call("POST", "/api/v1/consumer-groups/g/queues/q/seek", `{"timestamp": "`+at+`"}`, http.StatusOK, nil)
	if got := adminPayloads(t, c.pop("q", "", "g", 10)); !slices.Equal(got, []int{1, 2}) {
		t.Fatalf("pop after seeking again = %v, want [1 2]", got)
	}
	if st, raw := c.do("POST", "/api/v1/ack", api.AckRequest{TransactionID: held[0].TransactionID,
		PartitionID: held[0].PartitionID, LeaseID: held[0].LeaseID, ConsumerGroup: "g"}); st != http.StatusOK ||
		!strings.Contains(string(raw), `"success":false`) {
		t.Fatalf("ack on a lease the seek dropped = %d %s, want success false", st, raw)
	}
	// A time before everything replays from the start.
	c.call("POST", "/api/v1/consumer-groups/g/queues/q/seek", `{"timestamp": "1970-01-01T00:00:00Z"}`, http.StatusOK, nil)
	if got := adminPayloads(t, c.pop("q", "", "g", 10)); !slices.Equal(got, []int{0, 1, 2}) {
		t.Fatalf("pop after seeking to 1970 = %v, want [0 1 2]", got)
	}
}

func TestAdminSeekPartition(t *testing.T) {
	c := setupAdmin(t, nil)
	c.push("q", "a", "", map[string]int{"n": 1})
	c.push("q", "b", "", map[string]int{"n": 2})
	var res api.SeekResult
	// Queen's client sends an empty object: to the end.
	c.call("POST", "/api/v1/consumer-groups/g/queues/q/partitions/a/seek", `{}`, http.StatusOK, &res)
	if res.PartitionsUpdated != 1 || res.CommittedOffset == nil || *res.CommittedOffset != 0 {
		t.Fatalf("partition seek = %+v, want a's cursor at 0", res)
	}
	if got := adminPayloads(t, c.pop("q", "", "g", 10)); !slices.Equal(got, []int{2}) {
		t.Fatalf("pop after seeking a to its end = %v, want only b's [2]", got)
	}
	if got := c.pop("q", "", "g", 10); got != nil {
		t.Fatalf("second pop got %v, want nothing", adminPayloads(t, got))
	}
	c.call("POST", "/api/v1/consumer-groups/g/queues/q/partitions/a/seek", `{"timestamp":"2000-01-01T00:00:00Z"}`, http.StatusOK, nil)
	if got := adminPayloads(t, c.pop("q", "a", "g", 10)); !slices.Equal(got, []int{1}) {
		t.Fatalf("pop after seeking a back = %v, want [1]", got)
	}
}

func TestAdminSeekBadInput(t *testing.T) {
	c := setupAdmin(t, nil)
	c.push("q", "p", "", map[string]int{"n": 1})
	const seek = "/api/v1/consumer-groups/g/queues/q/seek"
	for _, body := range []string{`{}`, `{"toEnd": true, "timestamp": "2030-01-01T00:00:00Z"}`,
		`{"timestamp": "yesterday"}`, `{"toEnd": "yes"}`, `{"toEnd": true`, ``} {
		c.fails("POST", seek, body, http.StatusBadRequest)
	}
	if msg := c.fails("POST", "/api/v1/consumer-groups/g/queues/nope/seek", `{"toEnd":true}`, http.StatusNotFound); !strings.Contains(msg, "nope") {
		t.Fatalf("unknown queue message %q does not name it", msg)
	}
	c.fails("POST", "/api/v1/consumer-groups/g/queues/q/partitions/zz/seek", `{}`, http.StatusNotFound)
}

func TestAdminUpdateSubscription(t *testing.T) {
	c := setupAdmin(t, nil)
	c.push("q", "a", "", map[string]int{"n": 1})
	if got := c.pop("q", "a", "g", 1); len(got) != 1 { // subscribes g, mode all
		t.Fatalf("first pop got %d", len(got))
	}
	c.push("q", "b", "", map[string]int{"n": 2}) // written at adminT0
	from := adminT0.Add(time.Minute)
	var res api.SubscriptionUpdated
	c.call("POST", "/api/v1/consumer-groups/g/subscription",
		map[string]string{"subscriptionTimestamp": from.Format(time.RFC3339)}, http.StatusOK, &res)
	if res.RowsUpdated != 1 || !res.NewTimestamp.Equal(from) {
		t.Fatalf("update = %+v, want one subscription moved to %s", res, from)
	}
	// b is new to g and its message is older than the subscription time.
	if got := c.pop("q", "b", "g", 10); got != nil {
		t.Fatalf("pop of b = %v, want nothing before the subscription time", adminPayloads(t, got))
	}
	c.clock.Advance(2 * time.Minute)
	c.push("q", "b", "", map[string]int{"n": 3})
	if got := adminPayloads(t, c.pop("q", "b", "g", 10)); !slices.Equal(got, []int{3}) {
		t.Fatalf("pop of b = %v, want [3]", got)
	}

	c.fails("POST", "/api/v1/consumer-groups/g/subscription", `{}`, http.StatusBadRequest)
	c.fails("POST", "/api/v1/consumer-groups/g/subscription", `{"subscriptionTimestamp": "noon"}`, http.StatusBadRequest)
	c.fails("POST", "/api/v1/consumer-groups/ghost/subscription", `{"subscriptionTimestamp": "2030-01-01T00:00:00Z"}`, http.StatusNotFound)
}

func TestAdminDeleteConsumerGroup(t *testing.T) {
	c := setupAdmin(t, nil)
	c.push("q", "p", "", map[string]int{"n": 1})
	c.push("other", "p", "", map[string]int{"n": 2})
	for _, q := range []string{"q", "other"} {
		m := c.pop(q, "", "g", 1)
		c.ack(m[0], "g", "completed", "")
	}
	// Forget g's place on q only, keeping its subscription: it starts over.
	var res api.GroupDeleted
	c.call("DELETE", "/api/v1/consumer-groups/g/queues/q?deleteMetadata=false", nil, http.StatusOK, &res)
	if res.DeletedPartitions != 1 || res.MetadataDeleted {
		t.Fatalf("delete on q = %+v, want one cursor, metadata kept", res)
	}
	if got := adminPayloads(t, c.pop("q", "", "g", 10)); !slices.Equal(got, []int{1}) {
		t.Fatalf("pop after deleting g's cursor = %v, want [1] again", got)
	}
	if got := c.pop("other", "", "g", 10); got != nil {
		t.Fatal("deleting g on q moved it on other")
	}
	c.call("DELETE", "/api/v1/consumer-groups/g", nil, http.StatusOK, &res)
	if res.DeletedPartitions != 2 || !res.MetadataDeleted {
		t.Fatalf("delete g = %+v, want two cursors and metadata", res)
	}
	c.fails("GET", "/api/v1/consumer-groups/g", nil, http.StatusNotFound)
	c.fails("DELETE", "/api/v1/consumer-groups/g", nil, http.StatusNotFound)
	c.fails("DELETE", "/api/v1/consumer-groups/g/queues/nope", nil, http.StatusNotFound)
	c.fails("DELETE", "/api/v1/consumer-groups/g?deleteMetadata=maybe", nil, http.StatusBadRequest)
}

func TestAdminDeletesNeedOperator(t *testing.T) {
	c := setupAdmin(t, func(cfg *config.Server) {
		cfg.AuthToken, cfg.OperatorToken = "user-token", "operator-token"
	})
	c.token = "user-token"
	c.push("q", "p", "", map[string]int{"n": 1})
	c.pop("q", "", "g", 1)
	for _, path := range []string{"/api/v1/consumer-groups/g", "/api/v1/consumer-groups/g/queues/q", "/api/v1/dlq/1",
		"/api/v1/messages/00000000-0000-0000-0000-000000000000/t"} {
		c.fails("DELETE", path, nil, http.StatusForbidden)
	}
	c.call("GET", "/api/v1/consumer-groups/g", nil, http.StatusOK, nil)
	c.token = "operator-token"
	c.call("DELETE", "/api/v1/consumer-groups/g", nil, http.StatusOK, nil)
}

// A group counts lag on partitions it has not popped yet from where its
// subscription starts it.
func TestAdminGroupLagFromSubscription(t *testing.T) {
	c := setupAdmin(t, nil)
	if _, raw := c.do("GET", "/api/v1/consumer-groups", nil); string(raw) != "[]\n" {
		t.Fatalf("empty server lists %s, want []", raw)
	}
	c.push("q", "a", "", map[string]int{"n": 0})
	c.push("q", "b", "", map[string]int{"n": 1})
	c.clock.Advance(time.Minute)
	if st, raw := c.do("GET", "/api/v1/pop/queue/q?consumerGroup=g&subscriptionMode=new&wait=false", nil); st != http.StatusNoContent {
		t.Fatalf("new-mode pop = %d %s, want 204", st, raw)
	}
	c.clock.Advance(time.Minute)
	c.push("q", "b", "", map[string]int{"n": 2})
	c.push("q", "b", "", map[string]int{"n": 3})
	c.clock.Advance(10 * time.Minute)

	var detail map[string]api.GroupQueue
	c.call("GET", "/api/v1/consumer-groups/g", nil, http.StatusOK, &detail)
	q := detail["q"]
	if q.TotalLag != 2 || q.MaxTimeLag != 600 || q.State != "Lagging" || q.SubscriptionMode == nil || *q.SubscriptionMode != "new" {
		t.Fatalf("g on q = %+v, want lag 2, 600 s, Lagging, mode new", q.GroupStats)
	}
	a, b := q.Partitions[0], q.Partitions[1]
	if a.OffsetLag != 0 || a.CommittedOffset != nil || b.OffsetLag != 2 || b.CommittedOffset != nil {
		t.Fatalf("partitions = %+v, want a with nothing new, b with 2 new messages", q.Partitions)
	}
	if got := adminPayloads(t, c.pop("q", "", "g", 10)); !slices.Equal(got, []int{2, 3}) {
		t.Fatalf("pop = %v, want what the lag promised: [2 3]", got)
	}
}

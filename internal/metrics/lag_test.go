package metrics_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"testing"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/testserver"
)

// Lag is defined once (lethe.group_lag): the Prometheus gauge, the
// consumer-group list and the queue status say the same for the same data,
// a subscribed group without any cursor included.
func TestPrometheusLagMatchesTheAPI(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, testserver.Options{Config: dataDir(t)})

	// "idle" subscribes (mode all) before anything is pushed: it has no
	// cursor on any partition and is owed everything.
	call(t, "POST", s.URL+"/api/v1/configure", map[string]any{"queue": "lag"}, http.StatusOK, nil)
	call(t, "GET", s.URL+"/api/v1/pop/queue/lag?consumerGroup=idle", nil, http.StatusNoContent, nil)
	var items []api.PushItem
	for p := range 3 {
		for i := range 4 {
			items = append(items, api.PushItem{Queue: "lag", Partition: fmt.Sprintf("p%d", p),
				Payload: json.RawMessage(strconv.Itoa(i))})
		}
	}
	call(t, "POST", s.URL+"/api/v1/push", api.PushRequest{Items: items}, http.StatusCreated, nil)
	// "one" reads p0 to its end, "two" three messages of p1: each has a
	// cursor on one partition and counts the others from its subscription
	// start.
	consume(t, s.URL, "one", "p0", 4)
	consume(t, s.URL, "two", "p1", 3)

	want := map[string]int64{"idle": 12, "one": 8, "two": 9}
	prom := scrape(t, s.URL+"/metrics")
	var groups []api.GroupSummary
	call(t, "GET", s.URL+"/api/v1/consumer-groups", nil, http.StatusOK, &groups)
	listed := map[string]int64{}
	for _, g := range groups {
		if g.QueueName == "lag" {
			listed[g.Name] = g.TotalLag
		}
	}
	var detail api.QueueDetail
	call(t, "GET", s.URL+"/api/v1/status/queues/lag", nil, http.StatusOK, &detail)
	status := map[string]int64{}
	for _, g := range detail.ConsumerGroups {
		status[g.Name] = g.TotalLag
	}
	for group, n := range want {
		series := fmt.Sprintf(`lethe_queue_lag_messages{group=%q,queue="lag"}`, group)
		if got, ok := prom[series]; !ok || int64(got) != n {
			t.Errorf("Prometheus %s = %v (present %v), want %d; have:\n%s", series, got, ok, n, lethe(prom))
		}
		if listed[group] != n || status[group] != n {
			t.Errorf("group %s: /consumer-groups totalLag %d, /status/queues/lag totalLag %d, want %d",
				group, listed[group], status[group], n)
		}
	}
}

// consume pops n messages of one partition for group and acks them.
func consume(t *testing.T, url, group, partition string, n int) {
	t.Helper()
	var resp api.PopResponse
	call(t, "GET", fmt.Sprintf("%s/api/v1/pop/queue/lag/partition/%s?consumerGroup=%s&batch=%d", url, partition, group, n),
		nil, http.StatusOK, &resp)
	if len(resp.Messages) != n {
		t.Fatalf("pop %s of %s gave %d messages, want %d", partition, group, len(resp.Messages), n)
	}
	for _, m := range resp.Messages {
		var res api.AckResult
		call(t, "POST", url+"/api/v1/ack", api.AckRequest{TransactionID: m.TransactionID, PartitionID: m.PartitionID,
			LeaseID: m.LeaseID, Status: "completed", ConsumerGroup: group}, http.StatusOK, &res)
		if !res.Success {
			t.Fatalf("ack offset %d for %s: %s", m.Offset, group, res.Error)
		}
	}
}

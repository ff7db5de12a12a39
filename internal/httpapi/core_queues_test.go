package httpapi_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"testing"

	"github.com/lethe-mq/lethe/client/api"
)

func TestCoreHTTPConfigureAndResources(t *testing.T) {
	t.Parallel()
	r := startCoreReplica(t, nil)
	var cr api.ConfigureResponse
	r.call("POST", "/api/v1/configure", `{"queue":"cfg","namespace":"ns","task":"tk","options":{
		"leaseTime":45,"retryLimit":7,"delayedProcessing":3,"windowBuffer":2,"priority":5,
		"deadLetterQueue":true,"dedupWindowSeconds":60,"retryDelay":250}}`, http.StatusOK, &cr)
	want := api.DefaultQueueOptions()
	want.LeaseTime, want.RetryLimit, want.DelayedProcessing, want.WindowBuffer = 45, 7, 3, 2
	want.Priority, want.DeadLetterQueue, want.DedupWindowSeconds, want.RetryDelay = 5, true, 60, 250
	want.RetentionTier, want.Quarantined = "forever", "keep" // the server's defaults
	if !cr.Configured || cr.Queue != "cfg" || !reflect.DeepEqual(cr.Options, want) {
		t.Errorf("configure answered %+v, want options %+v", cr, want)
	}
	if n := r.count(`SELECT count(*) FROM lethe.queues WHERE name = 'cfg' AND lease_time = 45 AND retry_limit = 7
		AND delayed_processing = 3 AND window_buffer = 2 AND dedup_window_seconds = 60 AND namespace = 'ns' AND task = 'tk'`); n != 1 {
		t.Errorf("queue row does not hold the options")
	}
	// Options not named keep their values.
	r.call("POST", "/api/v1/configure", `{"queue":"cfg","options":{"leaseTime":50}}`, http.StatusOK, &cr)
	want.LeaseTime = 50
	if !reflect.DeepEqual(cr.Options, want) {
		t.Errorf("partial configure answered %+v, want %+v", cr.Options, want)
	}
	var info struct {
		Name      string           `json:"name"`
		Namespace string           `json:"namespace"`
		Task      string           `json:"task"`
		Options   api.QueueOptions `json:"options"`
	}
	r.call("GET", "/api/v1/resources/queues/cfg", "", http.StatusOK, &info)
	if info.Name != "cfg" || info.Namespace != "ns" || info.Task != "tk" || !reflect.DeepEqual(info.Options, want) {
		t.Errorf("GET queue = %+v, want options %+v", info, want)
	}
	// Bad options: 400 and nothing changes.
	for name, body := range map[string]string{
		"unknown option":   `{"queue":"cfg","options":{"leaseTime":60,"leaseTimeout":5}}`,
		"wrong type":       `{"queue":"cfg","options":{"leaseTime":"abc"}}`,
		"fraction":         `{"queue":"cfg","options":{"leaseTime":1.5}}`,
		"zero lease":       `{"queue":"cfg","options":{"leaseTime":0}}`,
		"negative retries": `{"queue":"cfg","options":{"retryLimit":-1}}`,
		"huge delay":       `{"queue":"cfg","options":{"delayedProcessing":999999999}}`,
		"options array":    `{"queue":"cfg","options":[1]}`,
		"options string":   `{"queue":"cfg","options":"fast"}`,
		"no queue":         `{"options":{"leaseTime":5}}`,
		"queue not string": `{"queue":7}`,
	} {
		requireCoreError(t, name, r.do("POST", "/api/v1/configure", body), http.StatusBadRequest)
	}
	r.call("GET", "/api/v1/resources/queues/cfg", "", http.StatusOK, &info)
	if !reflect.DeepEqual(info.Options, want) {
		t.Errorf("rejected configures changed the options to %+v", info.Options)
	}
	// Listing, with and without a namespace filter.
	r.push(api.PushItem{Queue: "plain", Payload: json.RawMessage(`1`)})
	var list struct {
		Queues []struct {
			Name string `json:"name"`
		} `json:"queues"`
		Total int `json:"total"`
	}
	r.call("GET", "/api/v1/resources/queues", "", http.StatusOK, &list)
	if list.Total != 2 || len(list.Queues) != 2 || list.Queues[0].Name != "cfg" || list.Queues[1].Name != "plain" {
		t.Errorf("queue list = %+v", list)
	}
	r.call("GET", "/api/v1/resources/queues?namespace=ns", "", http.StatusOK, &list)
	if list.Total != 1 || list.Queues[0].Name != "cfg" {
		t.Errorf("queue list of namespace ns = %+v", list)
	}
	requireCoreError(t, "GET unknown queue", r.do("GET", "/api/v1/resources/queues/nope", ""), http.StatusNotFound)
}

func TestCoreHTTPDeleteQueue(t *testing.T) {
	t.Parallel()
	r := startCoreReplica(t, nil)
	for _, p := range []string{"a", "b"} {
		// Producers' ids, so that the sidecar holds hashes to delete.
		r.push(api.PushItem{Queue: "doomed", Partition: p, Payload: json.RawMessage(`1`), TransactionID: p + "1"},
			api.PushItem{Queue: "doomed", Partition: p, Payload: json.RawMessage(`2`), TransactionID: p + "2"})
	}
	r.push(api.PushItem{Queue: "kept", Payload: json.RawMessage(`"stays"`), TransactionID: "kept"})
	m := r.pop("/api/v1/pop/queue/doomed?consumerGroup=g")
	r.ack(api.AckRequest{TransactionID: m.Messages[0].TransactionID, PartitionID: m.PartitionID, Status: "dlq", ConsumerGroup: "g"})
	segs := func(queue string) int64 {
		return r.count(`SELECT count(*) FROM lethe.segments s JOIN lethe.partitions p ON p.id = s.partition_id
			JOIN lethe.queues q ON q.id = p.queue_id WHERE q.name = $1`, queue)
	}
	if segs("doomed") != 2 {
		t.Fatalf("doomed has %d segments before the delete, want 2", segs("doomed"))
	}
	var del struct {
		Deleted         bool  `json:"deleted"`
		SegmentsDeleted int64 `json:"segmentsDeleted"`
	}
	r.call("DELETE", "/api/v1/resources/queues/doomed", "", http.StatusOK, &del)
	if !del.Deleted || del.SegmentsDeleted != 2 {
		t.Errorf("delete answered %+v, want 2 segments deleted", del)
	}
	for table, want := range map[string]int64{"queues": 1, "partitions": 1, "segments": 1, "txns": 1, "cursors": 0, "dead_letters": 0, "subscriptions": 0} {
		if n := r.count("SELECT count(*) FROM lethe." + table); n != want {
			t.Errorf("after the delete lethe.%s has %d rows, want %d (only queue kept's)", table, n, want)
		}
	}
	requireCoreError(t, "GET deleted queue", r.do("GET", "/api/v1/resources/queues/doomed", ""), http.StatusNotFound)
	requireCoreError(t, "DELETE deleted queue", r.do("DELETE", "/api/v1/resources/queues/doomed", ""), http.StatusNotFound)
	if got := r.pop("/api/v1/pop/queue/doomed?consumerGroup=g"); len(got.Messages) != 0 {
		t.Errorf("pop of the deleted queue got %d messages", len(got.Messages))
	}
	// The coreReplica forgot its cached ids: a push recreates the queue.
	r.push(api.PushItem{Queue: "doomed", Partition: "a", Payload: json.RawMessage(`"reborn"`)})
	got := r.pop("/api/v1/pop/queue/doomed?consumerGroup=g&batch=10")
	if len(got.Messages) != 1 || string(got.Messages[0].Data) != `"reborn"` || got.Messages[0].Offset != 0 {
		t.Errorf("after re-creating the queue got %+v", got.Messages)
	}
}

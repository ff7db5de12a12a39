package streams_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/config"
	"github.com/lethe-mq/lethe/internal/testserver"
)

func register(name, hash string, reset bool) api.StreamQueryRequest {
	return api.StreamQueryRequest{Name: name, SourceQueue: "src", SinkQueue: "sink", ConfigHash: hash, Reset: reset}
}

// A registration is idempotent for the same config hash, refused for a
// changed one without reset, and a reset gives the name a new query_id whose
// predecessor's cycles and reads are refused from then on.
func TestRegisterKeepsTheHashAndResetsOnlyWhenAsked(t *testing.T) {
	t.Parallel()
	b := setup(t, 0)
	b.queue(t, "src")
	var first, again, reset api.StreamQueryResponse
	b.must(t, http.StatusOK, http.MethodPost, "/streams/v1/queries", register("q", "h1", false), &first)
	if !first.Success || !first.Fresh || first.Reset || first.QueryID == "" {
		t.Fatalf("first registration: %+v, want success, fresh, a query_id", first)
	}
	b.must(t, http.StatusOK, http.MethodPost, "/streams/v1/queries", register("q", "h1", true), &again)
	if again.QueryID != first.QueryID || again.Fresh || again.Reset {
		t.Fatalf("same hash (reset asked): %+v, want the same query_id %s, neither fresh nor reset", again, first.QueryID)
	}
	var conflict api.Error
	b.must(t, http.StatusConflict, http.MethodPost, "/streams/v1/queries", register("q", "h2", false), &conflict)
	if !strings.Contains(conflict.Error, "config_hash mismatch") || !strings.Contains(conflict.Error, "reset:true") {
		t.Fatalf("changed hash without reset: error %q, want the mismatch and the reset hint", conflict.Error)
	}
	b.must(t, http.StatusOK, http.MethodPost, "/streams/v1/queries", register("q", "h2", true), &reset)
	if !reset.Reset || reset.Fresh || reset.QueryID == first.QueryID {
		t.Fatalf("changed hash with reset: %+v, want reset and a new query_id", reset)
	}
	state := api.StreamStateRequest{QueryID: first.QueryID, PartitionID: partitionID(t, b, "src", "p1")}
	b.must(t, http.StatusConflict, http.MethodPost, "/streams/v1/state/get", state, nil)
	cycle := api.StreamCycleRequest{QueryID: first.QueryID, PartitionID: state.PartitionID,
		StateOps: []api.StreamStateOp{{Type: "upsert", Key: "k"}}}
	b.must(t, http.StatusConflict, http.MethodPost, "/streams/v1/cycle", cycle, nil)
	state.QueryID = reset.QueryID
	b.must(t, http.StatusOK, http.MethodPost, "/streams/v1/state/get", state, nil)
}

// Bad registrations and unknown ids answer 4xx naming the field.
func TestStreamsRefuseBadInputWithFourHundreds(t *testing.T) {
	t.Parallel()
	b := setup(t, 0)
	b.queue(t, "src")
	var q api.StreamQueryResponse
	b.must(t, http.StatusOK, http.MethodPost, "/streams/v1/queries", register("q", "h", false), &q)
	pid := "00000000-0000-0000-0000-000000000001"
	for _, c := range []struct {
		path, body, field string
		status            int
	}{
		{"/streams/v1/queries", `{"source_queue":"s","config_hash":"h"}`, "name", 400},
		{"/streams/v1/queries", `{"name":"x","config_hash":"h"}`, "source_queue", 400},
		{"/streams/v1/queries", `{"name":"x","source_queue":"s"}`, "config_hash", 400},
		{"/streams/v1/queries", `{"name":"a\u0001b","source_queue":"s","config_hash":"h"}`, "name", 400},
		{"/streams/v1/cycle", `{"query_id":"nope","partition_id":"` + pid + `"}`, "query_id", 400},
		{"/streams/v1/cycle", `{"query_id":"` + q.QueryID + `","partition_id":"x"}`, "partition_id", 400},
		{"/streams/v1/cycle", `{"query_id":"` + q.QueryID + `","partition_id":"` + pid + `","state_ops":[{"type":"merge","key":"k"}]}`, "state_ops[0].type", 400},
		{"/streams/v1/cycle", `{"query_id":"` + q.QueryID + `","partition_id":"` + pid + `","state_ops":[{"type":"upsert","key":""}]}`, "state_ops[0].key", 400},
		{"/streams/v1/cycle", `{"query_id":"` + q.QueryID + `","partition_id":"` + pid + `","ack":{"transactionId":"t","status":"maybe"}}`, "", 400},
		{"/streams/v1/cycle", `{"query_id":"` + pid + `","partition_id":"` + pid + `"}`, "query_id", 404},
		{"/streams/v1/state/get", `{"query_id":"` + q.QueryID + `","partition_id":"` + pid + `","ripe_at_or_before":"soon"}`, "ripe_at_or_before", 400},
		{"/streams/v1/state/get", `{"query_id":"` + pid + `","partition_id":"` + pid + `"}`, "query_id", 404},
		{"/streams/v1/queries", `{"name":"x","source_queue":"nowhere","config_hash":"h"}`, "source_queue", 404},
		{"/streams/v1/cycle", `{"query_id":"` + q.QueryID + `","partition_id":"` + pid + `","state_ops":[{"type":"upsert","key":"k"}]}`, "partition_id", 404},
		{"/streams/v1/state/get", `{"query_id":"` + q.QueryID + `","partition_id":"` + pid + `"}`, "partition_id", 404},
	} {
		var e api.Error
		if got := b.call(t, http.MethodPost, c.path, c.body, &e); got != c.status || e.Error == "" || e.Field != c.field {
			t.Errorf("POST %s %s: %d field %q error %q; want %d naming field %q", c.path, c.body, got, e.Field, e.Error, c.status, c.field)
		}
	}
}

// Runners starting at once register the same new name: all succeed with
// one query_id, and exactly one of them registered it.
func TestConcurrentFirstRegistrationsAgree(t *testing.T) {
	t.Parallel()
	b := setup(t, 0)
	b.queue(t, "src")
	const n = 8
	out := make([]api.StreamQueryResponse, n)
	status := make([]int, n)
	done := make(chan struct{})
	for i := range n {
		go func() {
			defer func() { done <- struct{}{} }()
			body, _ := json.Marshal(register("same", "h", false))
			resp, err := http.Post(b.srv.URL+"/streams/v1/queries", "application/json", bytes.NewReader(body))
			if err != nil {
				return // status 0 fails below
			}
			defer resp.Body.Close()
			status[i] = resp.StatusCode
			_ = json.NewDecoder(resp.Body).Decode(&out[i])
		}()
	}
	for range n {
		<-done
	}
	fresh := 0
	for i := range n {
		if status[i] != http.StatusOK || out[i].QueryID != out[0].QueryID {
			t.Fatalf("registration %d: %d %+v; want 200 and query_id %s", i, status[i], out[i], out[0].QueryID)
		}
		if out[i].Fresh {
			fresh++
		}
	}
	if fresh != 1 {
		t.Fatalf("%d registrations say fresh, want 1", fresh)
	}
}

// A reset drops a query's state, as the operator's DELETE does, so it
// needs the operator role: the write token registers new names and the
// same config_hash again (reset or not), but its reset of a changed hash
// answers 403 saying what to send and leaves the registration and its
// state as they were. The operator's reset goes through.
func TestResetNeedsTheOperator(t *testing.T) {
	t.Parallel()
	b := setupWith(t, testserver.Options{Config: func(c *config.Server) { c.AuthToken, c.OperatorToken = "plain", "op" }})
	b.token = "plain"
	b.push(t, "src", "p1", "m1")
	var first, again api.StreamQueryResponse
	b.must(t, http.StatusOK, http.MethodPost, "/streams/v1/queries", register("q", "h1", true), &first)
	if !first.Fresh {
		t.Fatalf("a new name with reset asked: %+v, want fresh", first)
	}
	b.must(t, http.StatusOK, http.MethodPost, "/streams/v1/queries", register("q", "h1", true), &again)
	if again.QueryID != first.QueryID || again.Reset {
		t.Fatalf("the same hash with reset asked: %+v, want query_id %s kept", again, first.QueryID)
	}
	pid := partitionID(t, b, "src", "p1")
	writeState(t, b, first.QueryID, pid, map[string]string{"k": `1`})

	var refused api.Error
	b.must(t, http.StatusForbidden, http.MethodPost, "/streams/v1/queries", register("q", "h2", true), &refused)
	for _, want := range []string{`"q"`, "drops its state", "operator", "LETHE_OPERATOR_TOKEN"} {
		if !strings.Contains(refused.Error, want) {
			t.Errorf("a reset with the write token: error %q, want it to say %q", refused.Error, want)
		}
	}
	if got := stateOf(t, b, first.QueryID, pid); got["k"] != "1" {
		t.Fatalf("after the refused reset the state is %v, want k = 1 under query_id %s", got, first.QueryID)
	}
	b.must(t, http.StatusOK, http.MethodPost, "/streams/v1/queries", register("q", "h1", false), &again)
	if again.QueryID != first.QueryID {
		t.Fatalf("after the refused reset the registration is %s, want %s", again.QueryID, first.QueryID)
	}

	b.token = "op"
	var reset api.StreamQueryResponse
	b.must(t, http.StatusOK, http.MethodPost, "/streams/v1/queries", register("q", "h2", true), &reset)
	if !reset.Reset || reset.QueryID == first.QueryID {
		t.Fatalf("the operator's reset: %+v, want reset and a new query_id", reset)
	}
}

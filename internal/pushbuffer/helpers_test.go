package pushbuffer_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/config"
	"github.com/lethe-mq/lethe/internal/testkit"
	"github.com/lethe-mq/lethe/internal/testserver"
)

// start runs a replica whose data directory (and so its buffer) is dir.
func start(t *testing.T, dir, databaseURL string, more ...func(*config.Server)) *testserver.Server {
	t.Helper()
	return testserver.Start(t, testserver.Options{DatabaseURL: databaseURL, Config: func(c *config.Server) {
		c.DataDir = dir
		for _, f := range more {
			f(c)
		}
	}})
}

// do sends body (a string is sent as is, anything else as JSON) and returns
// the status and the raw answer.
var do = testkit.Do

// call is do that expects wantStatus and decodes the answer into out.
func call(t *testing.T, method, url string, body any, wantStatus int, out any) {
	t.Helper()
	status, raw := do(t, method, url, "", body)
	if status != wantStatus {
		t.Fatalf("%s %s = %d %s, want %d", method, url, status, raw, wantStatus)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: decode %s: %v", method, url, raw, err)
		}
	}
}

func setPush(t *testing.T, url string, on bool) api.PushMaintenance {
	t.Helper()
	var st api.PushMaintenance
	call(t, "POST", url+"/api/v1/system/maintenance", map[string]bool{"enabled": on}, http.StatusOK, &st)
	if st.Enabled != on || st.MaintenanceMode != on {
		t.Fatalf("POST maintenance enabled=%v answered %+v", on, st)
	}
	return st
}

func pushStatus(t *testing.T, url string) api.PushMaintenance {
	t.Helper()
	var st api.PushMaintenance
	call(t, "GET", url+"/api/v1/system/maintenance", nil, http.StatusOK, &st)
	return st
}

func push(t *testing.T, url string, items ...api.PushItem) []api.PushResult {
	t.Helper()
	var res []api.PushResult
	call(t, "POST", url+"/api/v1/push", api.PushRequest{Items: items}, http.StatusCreated, &res)
	return res
}

// popAll pops up to 100 messages of queue for group ("" is queue mode);
// none answers 204.
func popAll(t *testing.T, url, queue, group string) []api.Message {
	t.Helper()
	status, raw := do(t, "GET", url+"/api/v1/pop/queue/"+queue+"?batch=100&consumerGroup="+group, "", nil)
	switch status {
	case http.StatusNoContent:
		return nil
	case http.StatusOK:
		var resp api.PopResponse
		if err := json.Unmarshal(raw, &resp); err != nil {
			t.Fatal(err)
		}
		return resp.Messages
	}
	t.Fatalf("pop %s = %d %s", queue, status, raw)
	return nil
}

func txnIDs(msgs []api.Message) []string {
	var ids []string
	for _, m := range msgs {
		ids = append(ids, m.TransactionID)
	}
	return ids
}

// gauge reads one unlabelled series from the replica's metrics; it reads
// the replica's own view, unlike GET maintenance, which asks the database.
func gauge(t *testing.T, url, name string) float64 {
	t.Helper()
	_, raw := do(t, "GET", url+"/metrics", "", nil)
	for line := range strings.SplitSeq(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("metric %s: %v", name, err)
			}
			return f
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// eventually polls cond until it holds, for at most ten seconds.
var eventually = testkit.Eventually

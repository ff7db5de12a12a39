package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/validate"
)

// repeat joins n copies of one JSON value with commas.
func repeat(v string, n int) string { return strings.TrimSuffix(strings.Repeat(v+",", n), ",") }

// Every list a request body may hold has a bound (internal/validate, one
// place for each number, listed in docs/api.md's Input rules): one entry
// past it answers 400 naming the field and the bound, and writes nothing;
// requiredGroups and traceNames at their bounds are taken.
func TestEveryRequestListIsBounded(t *testing.T) {
	t.Parallel()
	r := startCoreReplica(t, nil)
	pid := uuid.NewString()
	ack := `{"transactionId":"t","partitionId":"` + pid + `"}`
	item := `{"queue":"bounded","payload":1}`
	cyc := `{"query_id":"` + uuid.NewString() + `","partition_id":"` + pid + `",`
	before := r.rowCounts()
	for _, c := range []struct {
		name, path, body, field string
		bound                   int
	}{
		{"push items", "/api/v1/push", `{"items":[` + repeat(item, validate.PushItemsMax+1) + `]}`, "items", validate.PushItemsMax},
		{"ack batch", "/api/v1/ack/batch", `{"acknowledgments":[` + repeat(ack, validate.AckBatchMax+1) + `]}`, "acknowledgments", validate.AckBatchMax},
		{"transaction operations", "/api/v1/transaction",
			`{"operations":[` + repeat(`{"type":"ack","transactionId":"t","partitionId":"`+pid+`"}`, validate.TransactionOperationsMax+1) + `]}`,
			"operations", validate.TransactionOperationsMax},
		{"transaction requiredLeases", "/api/v1/transaction",
			`{"operations":[{"type":"push","items":[` + item + `]}],"requiredLeases":[` + repeat(`"l"`, validate.TransactionLeasesMax+1) + `]}`,
			"requiredLeases", validate.TransactionLeasesMax},
		{"transaction items together", "/api/v1/transaction",
			`{"operations":[` + repeat(`{"type":"push","items":[`+repeat(item, validate.PushItemsMax/2+1)+`]}`, 2) + `]}`,
			"operations", validate.PushItemsMax},
		{"requiredGroups", "/api/v1/configure",
			`{"queue":"bounded","options":{"requiredGroups":[` + repeat(`"g"`, validate.RequiredGroupsMax+1) + `]}}`,
			"options.requiredGroups", validate.RequiredGroupsMax},
		{"streams state_ops", "/streams/v1/cycle", cyc + `"state_ops":[` + repeat(`{"type":"delete","key":"k"}`, validate.StateOpsMax+1) + `]}`,
			"state_ops", validate.StateOpsMax},
		{"streams push_items", "/streams/v1/cycle", cyc + `"push_items":[` + repeat(item, validate.PushItemsMax+1) + `]}`,
			"push_items", validate.PushItemsMax},
		{"streams keys", "/streams/v1/state/get", cyc + `"keys":[` + repeat(`"k"`, validate.StateKeysMax+1) + `]}`,
			"keys", validate.StateKeysMax},
		{"traceNames", "/api/v1/traces", `{"transactionId":"t","partitionId":"` + pid + `","data":1,"traceNames":[` +
			repeat(`"n"`, validate.TraceNamesMax+1) + `]}`, "traceNames", validate.TraceNamesMax},
	} {
		res := r.do("POST", c.path, c.body)
		var e api.Error
		if res.status != http.StatusBadRequest || json.Unmarshal(res.body, &e) != nil || e.Field != c.field ||
			!strings.Contains(e.Error, strconv.Itoa(c.bound)) {
			t.Errorf("%s, one past its bound: %d %.300s; want 400 naming %s and %d", c.name, res.status, res.body, c.field, c.bound)
		}
	}
	coreSameCounts(t, "lists past their bounds", before, r.rowCounts())

	res := r.do("POST", "/api/v1/configure",
		`{"queue":"bounded","options":{"requiredGroups":[`+repeat(`"g"`, validate.RequiredGroupsMax)+`]}}`)
	if res.status != http.StatusOK {
		t.Errorf("requiredGroups at its bound: %d %s, want 200", res.status, res.body)
	}
	var pushed []api.PushResult
	res = r.do("POST", "/api/v1/push", `{"items":[{"queue":"bounded","payload":1}]}`)
	if err := json.Unmarshal(res.body, &pushed); err != nil || len(pushed) != 1 {
		t.Fatalf("push: %d %s", res.status, res.body)
	}
	res = r.do("POST", "/api/v1/traces", `{"transactionId":"`+pushed[0].TransactionID+`","partitionId":"`+pushed[0].PartitionID+
		`","data":1,"traceNames":[`+repeat(`"n"`, validate.TraceNamesMax)+`]}`)
	if res.status != http.StatusCreated {
		t.Errorf("traceNames at its bound: %d %s, want 201", res.status, res.body)
	}
}

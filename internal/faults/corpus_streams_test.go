package faults_test

import (
	"fmt"
	"net/http"

	"github.com/google/uuid"
)

// streamsCases are bad requests to the traces and streams routes: each is
// refused before anything is written. live is a registered query's
// query_id, so that what refuses a request naming it is the rest.
func streamsCases(live string) []badRequest {
	bad := http.StatusBadRequest
	pid, qid := uuid.NewString(), uuid.NewString()
	req := func(method, path, body string, want int) badRequest {
		return badRequest{fmt.Sprintf("%s %s %s", method, path, body), method, path, body, want}
	}
	post := func(path string, want int, bodies ...string) []badRequest {
		var out []badRequest
		for _, b := range bodies {
			out = append(out, req("POST", path, b, want))
		}
		return out
	}
	cyc := `{"query_id":"` + qid + `","partition_id":"` + pid + `",`
	live = `{"query_id":"` + live + `","partition_id":"` + pid + `",`
	var out []badRequest
	for _, part := range [][]badRequest{
		post("/api/v1/traces", bad, ``, `{}`, `{"transactionId":"s1"}`, `{"transactionId":"s1","partitionId":"x","data":1}`,
			`{"transactionId":"s1","partitionId":"`+pid+`"}`, `{"transactionId":"s\u0000","partitionId":"`+pid+`","data":1}`,
			`{"transactionId":"s1","partitionId":"`+pid+`","data":1,"traceNames":[1]}`,
			`{"transactionId":"s1","partitionId":"`+pid+`","data":1,"traceNames":"a\u0007"}`,
			`{"transactionId":"s1","partitionId":"`+pid+`","data":1e999}`, `{"transactionId":"s1","partitionId":"`+pid+`","data":1,"eventType":"\u202e"}`),
		post("/api/v1/traces", http.StatusNotFound, `{"transactionId":"s1","partitionId":"`+pid+`","data":1}`),
		{req("GET", "/api/v1/traces/names?limit=0", "", bad), req("GET", "/api/v1/traces/names?offset=-1", "", bad),
			req("GET", "/api/v1/traces/by-name/n?limit=10001", "", bad), req("GET", "/api/v1/traces/by-name/n?limit=x", "", bad),
			req("GET", "/api/v1/traces/x/s1", "", bad)},
		post("/streams/v1/queries", bad, ``, `{}`, `{"source_queue":"s","config_hash":"h"}`, `{"name":"q","config_hash":"h"}`,
			`{"name":"q","source_queue":"s"}`, `{"name":"q\u0001","source_queue":"s","config_hash":"h"}`, `{"name":5}`,
			`{"name":"q","source_queue":"s","config_hash":"h","reset":"yes"}`, `{"name":"q","source_queue":"s","sink_queue":" ","config_hash":"h"}`),
		post("/streams/v1/cycle", bad, ``, `{}`, `{"query_id":"x","partition_id":"`+pid+`"}`, `{"query_id":"`+qid+`"}`,
			cyc+`"state_ops":[{"type":"merge","key":"k"}]}`, cyc+`"state_ops":[{"type":"upsert","key":""}]}`,
			cyc+`"state_ops":[{"type":"upsert","key":"k\u0000"}]}`, cyc+`"state_ops":{}}`,
			cyc+`"push_items":[{"queue":"  ","payload":1}]}`, cyc+`"ack":{"transactionId":"t","status":"maybe"}}`,
			cyc+`"ack":{"transactionId":""}}`, cyc+`"ack":{"transactionId":"t","count":-1}}`, cyc+`"release_lease":"no"}`,
			cyc+`"consumer_group":"g\u0001"}`, cyc+`"ack":{"transactionId":"t","leaseId":"x"}}`),
		post("/streams/v1/cycle", http.StatusNotFound, cyc+`"state_ops":[{"type":"upsert","key":"k","value":1}],"push_items":[{"queue":"new-q","payload":1}]}`),
		// A query over a queue that does not exist; a live query's cycle
		// and state read of a partition that does not exist.
		post("/streams/v1/queries", http.StatusNotFound, `{"name":"q","source_queue":"no-such-queue","config_hash":"h"}`,
			`{"name":"seed-query","source_queue":"no-such-queue","config_hash":"h1"}`),
		post("/streams/v1/cycle", http.StatusNotFound, live+`"state_ops":[{"type":"upsert","key":"k","value":1}],"push_items":[{"queue":"new-q","payload":1}]}`,
			live+`"state_ops":[{"type":"delete","key":"k"}]}`),
		post("/streams/v1/state/get", http.StatusNotFound, live+`"keys":["k"]}`),
		post("/streams/v1/state/get", bad, ``, `{}`, `{"query_id":"`+qid+`","partition_id":"x"}`, cyc+`"ripe_at_or_before":"soon"}`,
			cyc+`"keys":[1]}`, cyc+`"keys":[""]}`, cyc+`"key_prefix":"\u0000"}`),
	} {
		out = append(out, part...)
	}
	for _, what := range sortedKeys(badPathNames) {
		name := badPathNames[what]
		out = append(out, req("DELETE", "/streams/v1/queries/"+name, "", bad),
			req("GET", "/api/v1/traces/by-name/"+name, "", bad),
			req("GET", "/api/v1/traces/"+pid+"/"+name, "", bad))
	}
	return out
}

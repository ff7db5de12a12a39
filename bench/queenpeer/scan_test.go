package main

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/lethe-mq/lethe/bench/internal/lethebench"
)

// answers are pop answers as lethe and Queen write them: lethe's keys in
// its own order, Queen's sorted (nlohmann::json), with the pop's own
// partitionId and leaseId after the messages array, payloads that are
// objects with decoy keys, and escapes.
var answers = []string{
	`{"success":true,"queue":"q","partition":"p0","partitionId":"top","leaseId":"toplease","consumerGroup":"g","partitionsClaimed":1,"messages":[` +
		`{"id":"m1","transactionId":"t1","data":{"transactionId":"fake","leaseId":"x"},"createdAt":"x","partitionId":"p1","leaseId":"l1"},` +
		`{"id":"m2","transactionId":"t2","traceId":null,"data":null,"partitionId":"p1","leaseId":"l1","retryCount":0}]}`,
	`{"consumerGroup":"g","leaseId":"w1","messages":[{"consumerGroup":"g","createdAt":"2026-01-01T00:00:00Z","data":"AbC\"}{[","id":"m","leaseId":"w1",` +
		`"partition":"p0","partitionId":"pid-0","producerSub":null,"traceId":null,"transactionId":"t\u0031"},` +
		` {"data":[1,{"partitionId":"no"}],"leaseId":null,"partitionId":"pid-0","transactionId":"t2"}],"partition":"p0","partitionId":"top","partitionsClaimed":1,"success":true}`,
	`{"messages":[],"success":true}`,
	`{"success":true}`,
	`{"messages":null}`,
	`{"messages":[{"transactionId":"a","partitionId":"b","leaseId":"c"}],"messages":[{"transactionId":"d"}]}`,
	`{"me\u0073sages":[{"transaction\u0049d":"e","partitionId":"f","leaseId":"g\\"}]}`,
}

// reference reads the ids with encoding/json, matching keys exactly.
func reference(body []byte) ([]lethebench.Message, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return nil, err
	}
	var msgs []map[string]json.RawMessage
	if raw, ok := top["messages"]; ok {
		if err := json.Unmarshal(raw, &msgs); err != nil {
			return nil, err
		}
	}
	var out []lethebench.Message
	for _, m := range msgs {
		out = append(out, lethebench.Message{TransactionID: stringOf(m["transactionId"]),
			PartitionID: stringOf(m["partitionId"]), LeaseID: stringOf(m["leaseId"])})
	}
	return out, nil
}

func stringOf(raw json.RawMessage) string {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

func checkAgainstReference(t *testing.T, body []byte) {
	t.Helper()
	want, wantErr := reference(body)
	got, err := scanIDs(body)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("scanIDs(%q) error %v; encoding/json error %v", body, err, wantErr)
	}
	if len(got) != len(want) {
		t.Fatalf("scanIDs(%q) found %d messages, want %d", body, len(got), len(want))
	}
	for i := range want {
		if got[i].TransactionID != want[i].TransactionID || got[i].PartitionID != want[i].PartitionID || got[i].LeaseID != want[i].LeaseID {
			t.Fatalf("scanIDs(%q) message %d = %+v, want %+v", body, i, got[i], want[i])
		}
	}
}

func TestScanIDsMatchesEncodingJSON(t *testing.T) {
	for _, a := range answers {
		checkAgainstReference(t, []byte(a))
	}
	got, err := scanIDs([]byte(answers[1]))
	if err != nil || len(got) != 2 || got[0].TransactionID != "t1" || got[0].PartitionID != "pid-0" || got[1].LeaseID != "" {
		t.Fatalf("Queen's answer read as %+v, %v", got, err)
	}
}

func TestScanIDsOfAnEmptyPop(t *testing.T) {
	if got, err := scanIDs(nil); err != nil || len(got) != 0 {
		t.Fatalf("scanIDs(204 body) = %v, %v; want nothing and no error", got, err)
	}
}

func TestScanIDsRefusesBrokenAnswers(t *testing.T) {
	for _, body := range []string{`[]`, `{"messages":[{"transactionId":"a"`, `{"messages":[1]}`, `{"messages":{}}`, `{"a" 1}`, `"x"`} {
		if _, err := scanIDs([]byte(body)); err == nil {
			t.Errorf("scanIDs(%q) = no error, want one", body)
		}
	}
}

// FuzzScanIDs holds scanIDs to encoding/json on every valid answer and
// to not panicking on the rest.
func FuzzScanIDs(f *testing.F) {
	for _, a := range answers {
		f.Add([]byte(a))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if !json.Valid(body) || !utf8.Valid(body) {
			_, _ = scanIDs(body)
			return
		}
		checkAgainstReference(t, body)
	})
}

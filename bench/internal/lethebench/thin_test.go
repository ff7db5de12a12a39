package lethebench

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestThinMessagesMatchesJSON(t *testing.T) {
	body := []byte(`{"success":true,"queue":"q","partition":"Default","partitionId":"top","leaseId":"toplease","consumerGroup":"g","partitionsClaimed":1,"messages":[` +
		`{"id":"m1","transactionId":"t1","data":{"transactionId":"fake"},"createdAt":"x","queue":"q","partition":"Default","partitionId":"p1","leaseId":"l1","retryCount":0,"offset":0},` +
		`{"id":"m2","transactionId":"t2","traceId":"tr","data":null,"createdAt":"x","queue":"q","partition":"Default","partitionId":"p1","leaseId":"l1","retryCount":0,"offset":1}]}`)
	var thin popThin
	if err := json.Unmarshal(body, &thin); err != nil {
		t.Fatal(err)
	}
	var want []popped
	for _, m := range thin.Messages {
		want = append(want, popped{TransactionID: m.TransactionID, PartitionID: m.PartitionID, LeaseID: m.LeaseID})
	}
	got, err := thinMessages(body)
	if err != nil {
		t.Fatal(err)
	}
	// m1's payload holds a decoy "transactionId" key; it sits before the
	// message's partitionId, where the scanner is not looking for one.
	if len(got) != len(want) {
		t.Fatalf("thinMessages found %d messages, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.TransactionID != w.TransactionID || g.PartitionID != w.PartitionID || g.LeaseID != w.LeaseID {
			t.Fatalf("message %d: thinMessages = %+v, want %+v", i, g, w)
		}
	}
}

func TestThinMessagesOfAnEmptyPop(t *testing.T) {
	got, err := thinMessages(nil)
	if err != nil || len(got) != 0 {
		t.Fatalf("thinMessages(204 body) = %v, %v; want nothing and no error", got, err)
	}
}

// ackItem is one ack as encoding/json would write it: what ackBody must
// match.
type ackItem struct {
	TransactionID string `json:"transactionId"`
	PartitionID   string `json:"partitionId"`
	LeaseID       string `json:"leaseId,omitempty"`
	Status        string `json:"status"`
}

func TestAckBodyMatchesJSON(t *testing.T) {
	msgs := []popped{
		{TransactionID: "t1", PartitionID: "p1", LeaseID: "l1"},
		{TransactionID: `odd "id" \ é`, PartitionID: "p1"}, // no lease: auto-ack'd groups have none
	}
	for _, group := range []string{"g5-0", "gr\u00fcn\n"} {
		acks := make([]ackItem, len(msgs))
		for i, m := range msgs {
			acks[i] = ackItem{TransactionID: m.TransactionID, PartitionID: m.PartitionID, LeaseID: m.LeaseID, Status: "completed"}
		}
		want, _ := json.Marshal(map[string]any{"acknowledgments": acks, "consumerGroup": group})
		var got, exp any
		if err := json.Unmarshal(ackBody(group, msgs), &got); err != nil {
			t.Fatalf("ackBody(%q) is not JSON: %v: %s", group, err, ackBody(group, msgs))
		}
		_ = json.Unmarshal(want, &exp)
		if g, w := fmt.Sprint(got), fmt.Sprint(exp); g != w {
			t.Errorf("ackBody(%q) = %s, want %s", group, g, w)
		}
	}
}

func TestAckAnswer(t *testing.T) {
	for _, c := range []struct {
		raw  string
		n    int
		fail string // "" when it must pass
	}{
		{`[{"index":0,"transactionId":"a","success":true,"leaseReleased":false,"dlq":false},{"index":1,"transactionId":"b","success":true,"leaseReleased":true,"dlq":false}]`, 2, ""},
		{`[ {"success": true}, {"success": true} ]`, 2, ""}, // another server's spacing: decoded
		{`[{"transactionId":"a","success":true},{"transactionId":"b","success":false,"error":"lease expired"}]`, 2, "lease expired"},
		{`[{"success":true}]`, 2, "1 results for 2"},
		{`[{"transactionId":"\"success\":true","success":false,"error":"no"}]`, 1, "no"}, // the pattern inside a string is escaped
		{`not json`, 1, "ack answer"},
	} {
		err := ackAnswer([]byte(c.raw), c.n)
		switch {
		case c.fail == "" && err != nil:
			t.Errorf("ackAnswer(%s, %d) = %v, want success", c.raw, c.n, err)
		case c.fail != "" && (err == nil || !strings.Contains(err.Error(), c.fail)):
			t.Errorf("ackAnswer(%s, %d) = %v, want an error naming %q", c.raw, c.n, err, c.fail)
		}
	}
}

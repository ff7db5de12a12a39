package lethebench

import (
	"encoding/json"
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

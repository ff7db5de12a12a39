package main

import (
	"strconv"

	"github.com/google/uuid"
)

// batchBody is one push request: n messages for one partition, each with
// a transaction id made here, as Queen's clients make them (UUIDv7), so
// the ledger can follow every message and a retried request is a
// duplicate, not a second copy.
func batchBody(queue, partition string, n int, payloads [][]byte, seq int) ([]byte, []string, error) {
	ids := make([]string, n)
	head := `{"queue":` + strconv.Quote(queue) + `,"partition":` + strconv.Quote(partition) + `,"transactionId":"`
	buf := make([]byte, 0, 16+n*(len(head)+64+len(payloads[0])))
	buf = append(buf, `{"items":[`...)
	for i := range n {
		id, err := uuid.NewV7()
		if err != nil {
			return nil, nil, err
		}
		ids[i] = id.String()
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, head...)
		buf = append(buf, ids[i]...)
		buf = append(buf, `","payload":`...)
		buf = append(buf, payloads[(seq+i)%len(payloads)]...)
		buf = append(buf, '}')
	}
	return append(buf, "]}"...), ids, nil
}

func partitionName(i int) string { return "p" + strconv.Itoa(i) }

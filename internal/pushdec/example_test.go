package pushdec_test

import (
	"errors"
	"fmt"

	"github.com/lethe-mq/lethe/internal/pushdec"
)

func ExampleDecode() {
	body := []byte(`{"items":[{"queue":"orders","payload":{"id":1}},{"queue":"orders","payload":null}]}`)
	req, err := pushdec.Decode(body)
	if err != nil {
		panic(err)
	}
	for _, it := range req.Items {
		fmt.Printf("%s %s\n", it.Queue, it.Payload)
	}

	_, err = pushdec.Decode([]byte(`{"items":[{"queue":"orders"},{"queue":42}]}`))
	fmt.Println(err)
	fmt.Println(errors.Is(err, pushdec.ErrSyntax))
	// Output:
	// orders {"id":1}
	// orders null
	// items[1].queue must be a string, got number (at byte 38)
	// true
}

func ExampleDecodeAckBatch() {
	body := []byte(`{"consumerGroup":"billing","acknowledgments":[{"transactionId":"t1","partitionId":"p","status":"completed"}]}`)
	req, err := pushdec.DecodeAckBatch(body)
	if err != nil {
		panic(err)
	}
	fmt.Println(req.ConsumerGroup, req.Acknowledgments[0].TransactionID, req.Acknowledgments[0].Status)

	_, err = pushdec.DecodeAckBatch([]byte(`{"acknowledgments":[{"transactionId":"t1"},{"leaseId":7}]}`))
	fmt.Println(err)
	// Output:
	// billing t1 completed
	// acknowledgments[1].leaseId must be a string, got number (at byte 54)
}

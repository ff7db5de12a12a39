package clienttest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/lethe-mq/lethe/client"
	"github.com/lethe-mq/lethe/client/api"
)

// Push a message, pop it, and acknowledge it.
func Example_pushPopAck() {
	ctx := context.Background()
	c, err := client.New(serverURL()) // e.g. "http://localhost:6632"
	if err != nil {
		log.Fatal(err)
	}
	res, err := c.Push(ctx, api.PushItem{Queue: "example-orders", Payload: json.RawMessage(`{"id":1}`)})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("pushed:", res[0].Status)

	msgs, err := c.Pop(ctx, "example-orders", client.PopOptions{Batch: 10})
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range msgs {
		fmt.Println("popped:", string(m.Data))
		ack, err := c.Ack(ctx, m, api.AckCompleted, "")
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("acked:", ack.Success)
	}

	msgs, err = c.Pop(ctx, "example-orders", client.PopOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("left:", len(msgs))
	// Output:
	// pushed: queued
	// popped: {"id":1}
	// acked: true
	// left: 0
}

// Consume runs a handler over messages: a nil return acks the message
// completed, an error acks it failed so it is delivered again.
func Example_consume() {
	ctx := context.Background()
	c, err := client.New(serverURL())
	if err != nil {
		log.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		payload := json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))
		if _, err := c.Push(ctx, api.PushItem{Queue: "example-jobs", Payload: payload}); err != nil {
			log.Fatal(err)
		}
	}

	err = c.Consume(ctx, "example-jobs", client.ConsumeOptions{
		Batch:              10,
		LeaseRenewInterval: 30 * time.Second, // keep slow jobs' leases
		Limit:              3,                // stop after three messages
	}, func(ctx context.Context, m api.Message) error {
		fmt.Println("handled:", string(m.Data))
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// handled: {"n":1}
	// handled: {"n":2}
	// handled: {"n":3}
}

// A transaction acks a message and pushes its result together: either both
// happen or neither does.
func Example_transaction() {
	ctx := context.Background()
	c, err := client.New(serverURL())
	if err != nil {
		log.Fatal(err)
	}
	if _, err := c.Push(ctx, api.PushItem{Queue: "example-inbox", Payload: json.RawMessage(`"raw order"`)}); err != nil {
		log.Fatal(err)
	}
	msgs, err := c.Pop(ctx, "example-inbox", client.PopOptions{})
	if err != nil || len(msgs) != 1 {
		log.Fatal("pop: ", err)
	}
	in := msgs[0]

	resp, err := c.Transaction(ctx, api.TransactionRequest{Operations: []api.Operation{
		{Type: "ack", TransactionID: in.TransactionID, PartitionID: in.PartitionID, LeaseID: in.LeaseID, Status: api.AckCompleted},
		{Type: "push", Items: []api.PushItem{{Queue: "example-outbox", Payload: json.RawMessage(`"processed order"`)}}},
	}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("transaction:", resp.Success)

	out, _ := c.Pop(ctx, "example-outbox", client.PopOptions{AutoAck: true})
	fmt.Println("outbox:", string(out[0].Data))
	left, _ := c.Pop(ctx, "example-inbox", client.PopOptions{})
	fmt.Println("inbox left:", len(left))
	// Output:
	// transaction: true
	// outbox: "processed order"
	// inbox left: 0
}

// The server's refusals are *APIError values.
func Example_apiError() {
	c, err := client.New(serverURL())
	if err != nil {
		log.Fatal(err)
	}
	_, err = c.GetQueue(context.Background(), "example-no-such-queue")
	var apiErr *client.APIError
	if errors.As(err, &apiErr) {
		fmt.Println(apiErr.StatusCode, apiErr.Message)
	}
	// Output:
	// 404 not found: queue "example-no-such-queue" does not exist
}

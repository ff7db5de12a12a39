package client_test

// The examples of README.md, each one's body a block of it (readme_test.go
// checks that they stay the same). They need a running lethe, so they are
// compiled, not run; internal/clienttest runs examples against a real one.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"os/signal"
	"time"

	"github.com/lethe-mq/lethe/client"
	"github.com/lethe-mq/lethe/client/api"
)

func ExampleClient_Push() {
	ctx := context.Background()
	c, err := client.New("http://localhost:6632", client.WithToken(os.Getenv("LETHE_TOKEN")))
	if err != nil {
		log.Fatal(err)
	}
	// Each item gets a transactionId when it has none, so a retried push
	// answers "duplicate" instead of writing the message twice.
	res, err := c.Push(ctx,
		api.PushItem{Queue: "orders", Partition: "customer-42", Payload: json.RawMessage(`{"id":1}`)},
		api.PushItem{Queue: "orders", Partition: "customer-42", Payload: json.RawMessage(`{"id":2}`)},
	)
	if err != nil {
		log.Fatal(err) // the request as a whole failed
	}
	for _, r := range res { // one result per item, in order
		if r.Status == api.StatusFailed {
			log.Printf("item %d: %s", r.Index, r.Error)
			continue
		}
		fmt.Println(r.Status, r.TransactionID)
	}
}

func ExampleClient_Consume() {
	c, err := client.New("http://localhost:6632")
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	err = c.Consume(ctx, "orders", client.ConsumeOptions{
		Group:              "billing", // a consumer group; empty: queue mode
		Batch:              10,
		Concurrency:        4,
		LeaseRenewInterval: 30 * time.Second, // slow handlers keep their leases
		OnError:            func(err error) { log.Print(err) },
	}, func(ctx context.Context, m api.Message) error {
		var order struct{ ID int }
		if err := json.Unmarshal(m.Data, &order); err != nil {
			return err // acked failed: delivered again until the queue's retryLimit
		}
		fmt.Println("order", order.ID)
		return nil // acked completed
	})
	if err != nil {
		log.Print(err) // the server refused the pop itself (a 4xx)
	}
}

func ExampleClient_Ack() {
	ctx := context.Background()
	c, err := client.New("http://localhost:6632")
	if err != nil {
		log.Fatal(err)
	}
	// Long-poll up to 10s for at most 10 messages, leased to this caller.
	msgs, err := c.Pop(ctx, "orders", client.PopOptions{Batch: 10, Wait: true, Timeout: 10 * time.Second})
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range msgs {
		var order struct{ ID int }
		status, reason := api.AckCompleted, ""
		if err := json.Unmarshal(m.Data, &order); err != nil || order.ID == 0 {
			status, reason = api.AckDLQ, "no order id" // straight to the dead letters
		}
		_, err := c.Ack(ctx, m, status, reason)
		if errors.Is(err, client.ErrAckRejected) {
			log.Printf("%s: ack not applied: %v", m.TransactionID, err) // e.g. the lease ran out
		} else if err != nil {
			log.Fatal(err)
		}
	}
}

func ExampleAPIError() {
	// WithRetries retries 5xx answers and requests that got no answer;
	// a 4xx is the request's fault and is never retried.
	c, err := client.New("http://localhost:6632", client.WithRetries(3))
	if err != nil {
		log.Fatal(err)
	}
	q, err := c.GetQueue(context.Background(), "orders")
	var apiErr *client.APIError
	switch {
	case err == nil:
		fmt.Println(q.Name)
	case client.IsNotFound(err):
		fmt.Println("no queue orders")
	case errors.As(err, &apiErr) && !apiErr.Temporary():
		fmt.Println("refused:", apiErr.StatusCode, apiErr.Message) // 4xx: fix the request
	case errors.As(err, &apiErr):
		fmt.Println("server error, try later:", apiErr.StatusCode) // 5xx after the retries
	case client.IsUnreachable(err):
		fmt.Println("no answer:", err) // down, wrong address or broken connection
	default:
		log.Fatal(err)
	}
}

func Example_cancel() {
	c, err := client.New("http://localhost:6632", client.WithRetries(5))
	if err != nil {
		log.Fatal(err)
	}
	// The context bounds a call with its retries and their waits.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	msgs, err := c.Pop(ctx, "orders", client.PopOptions{Wait: true, Timeout: 30 * time.Second})
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		fmt.Println("nothing within 2s")
	case err != nil:
		log.Print(err) // a 4xx, or the retries ran out
	default:
		fmt.Println(len(msgs), "messages")
	}
}

package clienttest_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/lethe-mq/lethe/client"
	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/testserver"
)

func TestQueueLifecycle(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	c, _ := client.New(srv.URL)
	ctx := context.Background()

	resp, err := c.Configure(ctx, api.ConfigureRequest{Queue: "orders", Options: json.RawMessage(`{"leaseTime":60}`)})
	if err != nil || !resp.Configured || resp.Options.LeaseTime != 60 {
		t.Fatalf("configure: %+v, %v", resp, err)
	}
	// Unnamed options keep their values.
	resp, err = c.Configure(ctx, api.ConfigureRequest{Queue: "orders", Options: json.RawMessage(`{"retryLimit":7}`)})
	if err != nil || resp.Options.LeaseTime != 60 || resp.Options.RetryLimit != 7 {
		t.Fatalf("second configure: %+v, %v; want leaseTime kept at 60", resp, err)
	}
	if _, err := c.Push(ctx, api.PushItem{Queue: "orders", Partition: "eu", Payload: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	q, err := c.GetQueue(ctx, "orders")
	if err != nil || q.Name != "orders" || q.Options.RetryLimit != 7 || q.Partitions != 1 || q.Messages != 1 {
		t.Fatalf("get: %+v, %v", q, err)
	}
	list, err := c.ListQueues(ctx, client.ListQueuesOptions{})
	if err != nil || len(list) != 1 || list[0].Name != "orders" {
		t.Fatalf("list: %+v, %v", list, err)
	}
	h, err := c.Health(ctx)
	if err != nil || h.Status != "healthy" {
		t.Fatalf("health: %+v, %v", h, err)
	}
	if err := c.DeleteQueue(ctx, "orders"); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, err := c.GetQueue(ctx, "orders"); !client.IsNotFound(err) {
		t.Fatalf("get after delete: %v, want 404", err)
	}
	list, err = c.ListQueues(ctx, client.ListQueuesOptions{})
	if err != nil || len(list) != 0 {
		t.Fatalf("list after delete: %+v, %v; want empty, not nil error", list, err)
	}
}

package clienttest_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/lethe-mq/lethe/client"
	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/config"
	"github.com/lethe-mq/lethe/internal/testserver"
)

func TestAPIErrorDecoding(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body  string
		code        int
		wantMessage string
		wantText    string
	}{
		{"json", `{"error":"queue \"x\" does not exist"}`, 404, `queue "x" does not exist`, `404: queue "x" does not exist`},
		{"plain text", "upstream broke\n", 502, "upstream broke", "502: upstream broke"},
		{"empty", "", 500, "", "500: Internal Server Error"},
		{"other json", `{"message":"nope"}`, 400, `{"message":"nope"}`, `400: {"message":"nope"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tc.code)
				_, _ = io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			c, _ := client.New(srv.URL)
			err := c.Do(context.Background(), http.MethodGet, "/anything", nil, nil)
			var apiErr *client.APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("err = %v (%T), want an *APIError inside", err, err)
			}
			if apiErr.StatusCode != tc.code || apiErr.Message != tc.wantMessage {
				t.Fatalf("got %d %q, want %d %q", apiErr.StatusCode, apiErr.Message, tc.code, tc.wantMessage)
			}
			if !strings.Contains(err.Error(), tc.wantText) || !strings.Contains(err.Error(), "GET /anything") {
				t.Fatalf("err text %q should name the call and contain %q", err, tc.wantText)
			}
			if client.IsUnreachable(err) {
				t.Fatal("an answer from the server is not unreachable")
			}
		})
	}
}

func TestErrorsFromRealServer(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	c, _ := client.New(srv.URL)
	ctx := context.Background()

	_, err := c.GetQueue(ctx, "missing")
	if !client.IsNotFound(err) || !strings.Contains(err.Error(), `queue "missing" does not exist`) {
		t.Errorf("GetQueue(missing) = %v, want a 404 naming the queue", err)
	}

	_, err = c.Push(ctx, api.PushItem{Queue: "", Payload: json.RawMessage(`1`)})
	var apiErr *client.APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || !strings.Contains(apiErr.Message, "queue is required") {
		t.Errorf("push without queue = %v, want 400 saying the queue is required", err)
	}

	if _, err := c.Push(ctx, api.PushItem{Queue: "q", Payload: json.RawMessage(`1`)}); err != nil {
		t.Fatal(err)
	}
	msgs, err := c.Pop(ctx, "q", client.PopOptions{})
	if err != nil || len(msgs) != 1 {
		t.Fatalf("pop: %v, %d messages", err, len(msgs))
	}
	bogus := msgs[0]
	bogus.TransactionID = "not-delivered"
	res, err := c.Ack(ctx, bogus, api.AckCompleted, "")
	if !errors.Is(err, client.ErrAckRejected) || res.Success || res.Error == "" {
		t.Errorf("ack of an unknown transaction = %+v, %v; want ErrAckRejected with the reason", res, err)
	}

	resp, err := c.Transaction(ctx, api.TransactionRequest{Operations: []api.Operation{
		{Type: "ack", TransactionID: "not-delivered", PartitionID: msgs[0].PartitionID, Status: api.AckCompleted},
		{Type: "push", Items: []api.PushItem{{Queue: "q", Payload: json.RawMessage(`2`)}}},
	}})
	if !errors.Is(err, client.ErrTransactionAborted) || resp == nil || resp.Success || resp.Error == "" {
		t.Errorf("transaction with a bad ack = %+v, %v; want ErrTransactionAborted with the reason", resp, err)
	}

	_, err = c.ExtendLease(ctx, "6a1b0f0e-0000-4000-8000-000000000000", 10)
	if !client.IsNotFound(err) {
		t.Errorf("extend of an unknown lease = %v, want 404", err)
	}
	if _, err := c.ExtendLease(ctx, msgs[0].LeaseID, 10); err != nil {
		t.Errorf("extend of a held lease: %v", err)
	}
}

func TestUnreachableServer(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	c, _ := client.New("http://" + addr)
	_, err = c.Health(context.Background())
	if !client.IsUnreachable(err) {
		t.Fatalf("err = %v, want IsUnreachable", err)
	}
	var apiErr *client.APIError
	if errors.As(err, &apiErr) {
		t.Fatal("no answer must not look like an APIError")
	}
}

func TestNewRejectsBadURLs(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"", "localhost:6632", "ftp://x", "http://", "::"} {
		if _, err := client.New(u); err == nil {
			t.Errorf("New(%q) succeeded, want an error", u)
		}
	}
	c, err := client.New(" http://localhost:6632/ ")
	if err != nil || c.BaseURL() != "http://localhost:6632" {
		t.Fatalf("New with a trailing slash: %v, base %q", err, c.BaseURL())
	}
}

func TestTokenIsSent(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{Config: func(c *config.Server) { c.AuthToken = "s3cret" }})
	ctx := context.Background()
	anon, _ := client.New(srv.URL)
	var apiErr *client.APIError
	if _, err := anon.ListQueues(ctx, client.ListQueuesOptions{}); !errors.As(err, &apiErr) || apiErr.StatusCode != 401 {
		t.Fatalf("without token: %v, want 401", err)
	}
	authed, _ := client.New(srv.URL, client.WithToken("s3cret"))
	if _, err := authed.ListQueues(ctx, client.ListQueuesOptions{}); err != nil {
		t.Fatalf("with token: %v", err)
	}
}

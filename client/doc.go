// Package client talks to lethe, or to any server that speaks Queen MQ's
// HTTP API v1, over HTTP.
//
// A Client is safe for concurrent use. Every call takes a context; calls
// return errors and never log. A server's refusal is an *APIError, so
// callers can tell a bad request (4xx, never retried) from a server in
// trouble (5xx, retried when WithRetries is set):
//
//	c, err := client.New("http://localhost:6632", client.WithRetries(3))
//	...
//	_, err = c.GetQueue(ctx, "orders")
//	var apiErr *client.APIError
//	if errors.As(err, &apiErr) && apiErr.StatusCode == 404 { ... }
//
// Consume runs a worker loop over a handler: it pops, calls the handler,
// acks each message completed or failed, and renews leases while the
// handler runs.
package client

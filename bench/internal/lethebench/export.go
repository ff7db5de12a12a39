package lethebench

import (
	"context"
	"time"
)

// Client is the scenarios' HTTP client for other bench packages (the
// soak): pushes of pre-assembled bodies, pops with payloads, batch acks.
type Client struct{ c *client }

// Message is one popped message.
type Message = popped

// NewClient keeps up to 2×conns connections alive to the server at base.
func NewClient(base string, conns int) *Client { return &Client{c: newClient(base, conns)} }

// Close drops the idle connections.
func (c *Client) Close() { c.c.close() }

// Push sends a push body; only 201 is a success.
func (c *Client) Push(ctx context.Context, body []byte) error { return c.c.push(ctx, body) }

// Pop leases up to batch messages of queue to group, with their payloads,
// waiting up to wait for some (none: answer at once).
func (c *Client) Pop(ctx context.Context, queue, group string, batch int, wait time.Duration) ([]Message, error) {
	return c.c.pop(ctx, queue, group, batch, wait, true)
}

// Ack completes msgs for group; an error unless every ack succeeded.
func (c *Client) Ack(ctx context.Context, group string, msgs []Message) error {
	return c.c.ack(ctx, group, msgs)
}

// Configure creates or updates a queue.
func (c *Client) Configure(ctx context.Context, queue string, options map[string]any) error {
	return c.c.configure(ctx, queue, options)
}

// PushAny2xx sends a push body; any 2xx is a success (Queen answers 200).
func (c *Client) PushAny2xx(ctx context.Context, body []byte) error { return c.c.pushAny2xx(ctx, body) }

// PopRaw leases up to batch messages of queue to group without waiting and
// returns the answer's bytes, empty when nothing was leased (204), for a
// caller that reads the answer itself (a server whose keys come in another
// order than lethe's, which thinMessages relies on).
func (c *Client) PopRaw(ctx context.Context, queue, group string, batch int) ([]byte, error) {
	return c.c.popRaw(ctx, queue, group, batch)
}

package cli

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/lethe-mq/lethe/client"
	"github.com/lethe-mq/lethe/client/api"
)

const (
	// tailBacklogMax bounds how many messages one look (--from, or one
	// poll of --follow) loads before printing.
	tailBacklogMax = 10_000
	// tailBrowsePage is the server's largest browse page.
	tailBrowsePage = 1000
	// tailFollowSlack is how far before the newest message seen each poll
	// looks again, so a message stamped a little earlier but stored later
	// (another replica, a slow group commit) is not missed.
	tailFollowSlack = 10 * time.Second
)

// browser follows a queue through the message-browsing API; it consumes
// nothing.
type browser struct {
	o      *tailOptions
	c      *client.Client
	seen   map[string]time.Time // message id -> createdAt, of what was printed or skipped
	newest *time.Time
	warned bool
}

func (o *tailOptions) browse(ctx context.Context, c *client.Client, w io.Writer) error {
	b := &browser{o: o, c: c, seen: map[string]time.Time{}}
	var first []api.BrowsedMessage
	var err error
	if o.fromTime != nil {
		first, err = b.since(ctx, o.fromTime)
	} else {
		var page *api.MessagePage
		page, err = b.page(ctx, nil, max(o.lines, 1), 0)
		if page != nil {
			first = page.Messages[:min(o.lines, len(page.Messages))]
			b.mark(page.Messages)
		}
	}
	if err != nil {
		return err
	}
	if err := b.print(ctx, w, first); err != nil {
		return err
	}
	if !o.follow {
		return nil
	}
	if b.newest != nil {
		// What the first look left out near its newest message is old,
		// not new: mark it so the first poll does not print it. Only what
		// is not newer than that message: one pushed since the first look
		// is new, and the first poll prints it.
		cut := *b.newest
		back := cut.Add(-tailFollowSlack)
		older, err := b.since(ctx, &back)
		if err != nil {
			return err
		}
		b.mark(slices.DeleteFunc(older, func(m api.BrowsedMessage) bool { return m.CreatedAt.After(cut) }))
	}
	return b.follow(ctx, w)
}

// follow polls for messages not seen yet until ctx ends.
func (b *browser) follow(ctx context.Context, w io.Writer) error {
	t := time.NewTicker(b.o.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		var from *time.Time
		if b.newest != nil {
			back := b.newest.Add(-tailFollowSlack)
			from = &back
			b.forget(back.Add(-tailFollowSlack))
		}
		msgs, err := b.since(ctx, from)
		if err != nil {
			return err
		}
		if err := b.print(ctx, w, msgs); err != nil {
			return err
		}
	}
}

// since loads the messages from a time on (all when nil) that were not
// seen yet, newest first, at most tailBacklogMax of them.
func (b *browser) since(ctx context.Context, from *time.Time) ([]api.BrowsedMessage, error) {
	var out []api.BrowsedMessage
	for offset := 0; ; offset += tailBrowsePage {
		page, err := b.page(ctx, from, tailBrowsePage, offset)
		if err != nil {
			return nil, err
		}
		for _, m := range page.Messages {
			if _, ok := b.seen[m.ID]; !ok {
				out = append(out, m)
			}
		}
		if len(out) >= tailBacklogMax {
			fmt.Fprintf(b.o.errOut, "tail: more than %d messages; printing the newest %d (use a later --from)\n",
				tailBacklogMax, tailBacklogMax)
			return out[:tailBacklogMax], nil
		}
		if len(page.Messages) < tailBrowsePage {
			return out, nil
		}
	}
}

// page asks the browsing API for one page, newest first.
func (b *browser) page(ctx context.Context, from *time.Time, limit, offset int) (*api.MessagePage, error) {
	q := url.Values{"queue": {b.o.queue}, "limit": {strconv.Itoa(limit)}, "offset": {strconv.Itoa(offset)}}
	if b.o.partition != "" {
		q.Set("partition", b.o.partition)
	}
	if from != nil {
		q.Set("from", from.UTC().Format(time.RFC3339Nano))
	}
	var page api.MessagePage
	if err := b.c.Do(ctx, http.MethodGet, "/api/v1/messages?"+q.Encode(), nil, &page); err != nil {
		return nil, err
	}
	if page.Truncated && !b.warned {
		b.warned = true
		fmt.Fprintln(b.o.errOut, "tail: the server stopped scanning at its budget, so some messages may be missing: narrow with --partition or a later --from")
	}
	return &page, nil
}

// print fetches the payloads of msgs and prints them oldest first.
func (b *browser) print(ctx context.Context, w io.Writer, msgs []api.BrowsedMessage) error {
	slices.SortFunc(msgs, func(x, y api.BrowsedMessage) int {
		return cmp.Or(x.CreatedAt.Compare(y.CreatedAt), cmp.Compare(x.PartitionID, y.PartitionID), cmp.Compare(x.Offset, y.Offset))
	})
	for _, m := range msgs {
		full, err := b.payload(ctx, m)
		if err != nil {
			return err
		}
		if err := b.o.printMessage(w, full); err != nil {
			return err
		}
		b.mark([]api.BrowsedMessage{m})
	}
	return nil
}

// payload reads a browsed message's payload; one whose transaction id the
// server no longer keeps comes back without Data.
func (b *browser) payload(ctx context.Context, m api.BrowsedMessage) (api.Message, error) {
	out := api.Message{ID: m.ID, TransactionID: m.TransactionID, TraceID: api.NullString(m.TraceID), CreatedAt: m.CreatedAt.Format(time.RFC3339Nano),
		Queue: m.Queue, Partition: m.Partition, PartitionID: m.PartitionID, Offset: m.Offset}
	var d api.MessageDetail
	path := "/api/v1/messages/" + url.PathEscape(m.PartitionID) + "/" + url.PathEscape(m.TransactionID)
	err := b.c.Do(ctx, http.MethodGet, path, nil, &d)
	if client.IsNotFound(err) {
		return out, nil
	}
	if err != nil {
		return out, err
	}
	out.Data, out.ProducerSub = d.Payload, api.NullString(d.ProducerSub)
	return out, nil
}

func (b *browser) mark(msgs []api.BrowsedMessage) {
	for _, m := range msgs {
		b.seen[m.ID] = m.CreatedAt
		if b.newest == nil || m.CreatedAt.After(*b.newest) {
			t := m.CreatedAt
			b.newest = &t
		}
	}
}

// forget drops what is too old for any later poll to return, so a long
// --follow does not grow without bound.
func (b *browser) forget(before time.Time) {
	for id, at := range b.seen {
		if at.Before(before) {
			delete(b.seen, id)
		}
	}
}

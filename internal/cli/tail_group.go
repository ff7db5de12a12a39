package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/lethe-mq/lethe/client"
	"github.com/lethe-mq/lethe/client/api"
)

const (
	// tailConsumeBatch is how many messages one pop of tail --group leases.
	tailConsumeBatch = 100
	// tailAckTimeout bounds the ack of a printed batch, which is sent even
	// after an interrupt so that what was printed is not delivered again.
	tailAckTimeout = 10 * time.Second
)

// consume pops messages as the consumer group, prints them and acks each
// batch once it is printed. Without --follow it stops when nothing is left.
func (o *tailOptions) consume(ctx context.Context, c *client.Client, w io.Writer) error {
	opts := client.PopOptions{Group: o.group, Partition: o.partition, Batch: tailConsumeBatch, Wait: o.follow}
	if o.fromTime != nil {
		opts.SubscriptionFrom = o.fromTime.UTC().Format(time.RFC3339Nano)
	}
	for {
		resp, err := c.PopResponse(ctx, o.queue, opts)
		if err != nil {
			return err
		}
		if err := printGaps(o.stderr, resp.Gaps); err != nil {
			return err
		}
		msgs := resp.Messages
		if len(msgs) == 0 {
			if !o.follow {
				return nil
			}
			continue
		}
		acks := make([]api.AckRequest, 0, len(msgs))
		for _, m := range msgs {
			if err := o.printMessage(w, m); err != nil {
				return err // unacked: the lease runs out and the group gets them again
			}
			acks = append(acks, client.AckRequestFor(m, api.AckCompleted, ""))
		}
		if err := o.ack(ctx, c, acks); err != nil {
			return err
		}
	}
}

func (o *tailOptions) ack(ctx context.Context, c *client.Client, acks []api.AckRequest) error {
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), tailAckTimeout)
	defer cancel()
	results, err := c.AckBatch(actx, o.group, acks)
	if err != nil {
		return fmt.Errorf("ack the %d printed messages (they will be delivered to %s again): %w", len(acks), o.group, err)
	}
	for _, r := range results {
		if !r.Success {
			fmt.Fprintf(o.errOut, "tail: the ack of %s was not applied (%s); %s will receive it again\n", r.TransactionID, r.Error, o.group)
		}
	}
	return nil
}

package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/lethe-mq/lethe/client"
	"github.com/lethe-mq/lethe/client/api"
)

type ackOptions struct {
	clientFlags
	req api.AckRequest
}

func newAckCmd() *cobra.Command {
	o := &ackOptions{}
	cmd := &cobra.Command{
		Use:   "ack --partition-id ID --txn ID [--lease ID] [--status completed|failed|dlq]",
		Short: "Acknowledge a popped message",
		Long: `Acknowledge a message popped with ` + "`lethe pop`" + `, which prints the ids to pass.
completed: done, never delivered again to this group; failed: delivered again
until the queue's retryLimit, then dead-lettered; dlq: dead-lettered now.`,
		Example: `  lethe ack --partition-id 3f0c... --txn order-1 --lease 9a1e...
  lethe ack --partition-id 3f0c... --txn order-1 --status failed --error "card declined"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context(), cmd.OutOrStdout())
		},
	}
	addClientFlags(cmd, &o.clientFlags)
	f := cmd.Flags()
	f.StringVar(&o.req.PartitionID, "partition-id", "", "the message's partitionId (from lethe pop)")
	f.StringVar(&o.req.TransactionID, "txn", "", "the message's transactionId (from lethe pop)")
	f.StringVar(&o.req.LeaseID, "lease", "", "the lease the message was popped under (from lethe pop)")
	f.StringVar(&o.req.ConsumerGroup, "group", "", "consumer group it was popped for (default: queue mode)")
	f.StringVar(&o.req.Status, "status", api.AckCompleted, "completed, failed or dlq")
	f.StringVar(&o.req.Error, "error", "", "why it failed (kept with a dead letter)")
	return cmd
}

func (o *ackOptions) Validate() error {
	if o.req.PartitionID == "" || o.req.TransactionID == "" {
		return errors.New("--partition-id and --txn are required: copy them from the output of `lethe pop`")
	}
	switch o.req.Status {
	case api.AckCompleted, api.AckFailed, api.AckDLQ:
	default:
		return fmt.Errorf("--status must be completed, failed or dlq, got %q", o.req.Status)
	}
	if o.req.Error != "" && o.req.Status == api.AckCompleted {
		return errors.New("--error explains a failure: use it with --status failed or dlq")
	}
	return nil
}

func (o *ackOptions) Run(ctx context.Context, w io.Writer) error {
	c, err := o.newClient()
	if err != nil {
		return err
	}
	res, err := c.AckRequest(ctx, o.req)
	if err != nil && !errors.Is(err, client.ErrAckRejected) {
		return o.explain(err)
	}
	if o.json {
		if perr := printJSON(w, res); perr != nil {
			return perr
		}
	}
	if err != nil {
		return fmt.Errorf("the ack was not applied: %s", res.Error)
	}
	if o.json {
		return nil
	}
	line := fmt.Sprintf("acked %s as %s", o.req.TransactionID, o.req.Status)
	if res.LeaseReleased {
		line += "; lease released"
	}
	if res.DLQ {
		line += "; moved to the dead letters"
	}
	_, err = fmt.Fprintln(w, line)
	return err
}

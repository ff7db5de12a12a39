package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/lethe-mq/lethe/client"
	"github.com/lethe-mq/lethe/client/api"
)

// popBatchMax is the server's largest batch.
const popBatchMax = 10_000

type popOptions struct {
	clientFlags
	queue     string
	partition string
	group     string
	batch     int
	wait      bool
	timeoutMS int
	autoAck   bool
	stderr    io.Writer // where gaps are told
}

func newPopCmd() *cobra.Command {
	o := &popOptions{}
	cmd := &cobra.Command{
		Use:   "pop QUEUE",
		Short: "Pop (lease) messages from a queue",
		Long: `Pop messages from QUEUE on a running lethe. The messages are leased to
the consumer group until acked with ` + "`lethe ack`" + ` (or until the lease runs
out, when they are delivered again); --auto-ack marks them done at once.`,
		Example: `  lethe pop orders
  lethe pop orders --group billing --batch 10 --wait --timeout 5000`,
		Args:              oneArg("queue name", "lethe pop QUEUE"),
		ValidArgsFunction: o.completeQueue,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.queue = args[0]
			if err := o.Validate(); err != nil {
				return err
			}
			o.stderr = cmd.ErrOrStderr()
			return o.Run(cmd.Context(), cmd.OutOrStdout())
		},
	}
	addClientFlags(cmd, &o.clientFlags)
	f := cmd.Flags()
	f.StringVar(&o.partition, "partition", "", "pop only this partition (default: any with messages)")
	f.StringVar(&o.group, "group", "", "consumer group (default: queue mode, one shared cursor)")
	f.IntVar(&o.batch, "batch", 1, "most messages to pop")
	f.BoolVar(&o.wait, "wait", false, "wait for messages when none are there yet")
	f.IntVar(&o.timeoutMS, "timeout", 0, "with --wait, how long to wait in ms (default: the server's, 30000)")
	f.BoolVar(&o.autoAck, "auto-ack", false, "mark the messages done as they are delivered (no ack needed)")
	return cmd
}

func (o *popOptions) Validate() error {
	if o.batch < 1 || o.batch > popBatchMax {
		return fmt.Errorf("--batch must be between 1 and %d, got %d", popBatchMax, o.batch)
	}
	if o.timeoutMS < 0 {
		return fmt.Errorf("--timeout is in milliseconds and must be 0 or more, got %d", o.timeoutMS)
	}
	if o.timeoutMS > 0 && !o.wait {
		return fmt.Errorf("--timeout only applies with --wait; add --wait to wait up to %d ms", o.timeoutMS)
	}
	return nil
}

func (o *popOptions) Run(ctx context.Context, w io.Writer) error {
	c, err := o.newClient()
	if err != nil {
		return err
	}
	resp, err := c.PopResponse(ctx, o.queue, client.PopOptions{
		Partition: o.partition, Group: o.group, Batch: o.batch, Wait: o.wait,
		Timeout: time.Duration(o.timeoutMS) * time.Millisecond, AutoAck: o.autoAck,
	})
	if err != nil {
		return o.explain(err)
	}
	if err := printGaps(o.stderr, resp.Gaps); err != nil {
		return err
	}
	msgs := resp.Messages
	if o.json {
		return printJSON(w, msgs)
	}
	return o.printMessages(w, msgs)
}

// printGaps tells, one line each, what the server said the group lost
// unread (it says so once).
func printGaps(w io.Writer, gaps []api.Gap) error {
	if w == nil {
		w = os.Stderr
	}
	for _, g := range gaps {
		if _, err := fmt.Fprintf(w, "lost: %s\n", g.Reason); err != nil {
			return err
		}
	}
	return nil
}

func (o *popOptions) printMessages(w io.Writer, msgs []api.Message) error {
	if len(msgs) == 0 {
		_, err := fmt.Fprintf(w, "no messages available in %s\n", o.queue)
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PARTITION\tPARTITION-ID\tTRANSACTION-ID\tLEASE-ID\tRETRIES\tDATA")
	for _, m := range msgs {
		lease := m.LeaseID
		if lease == "" {
			lease = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", m.Partition, m.PartitionID, m.TransactionID, lease, m.RetryCount, m.Data)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if o.autoAck || msgs[0].LeaseID == "" {
		return nil
	}
	m := msgs[0]
	hint := fmt.Sprintf("ack with: lethe ack --partition-id %s --txn %s --lease %s", m.PartitionID, shellQuote(m.TransactionID), m.LeaseID)
	if o.group != "" {
		hint += " --group " + shellQuote(o.group)
	}
	_, err := fmt.Fprintln(w, hint)
	return err
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	for _, r := range s {
		if !(r == '-' || r == '_' || r == '.' || r == ':' || r == '/' ||
			(r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')) {
			return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
		}
	}
	if s == "" {
		return "''"
	}
	return s
}

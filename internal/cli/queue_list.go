package cli

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/lethe-mq/lethe/client"
)

type queueListOptions struct {
	*clientFlags
}

func newQueueListCmd(f *clientFlags) *cobra.Command {
	o := &queueListOptions{clientFlags: f}
	return &cobra.Command{
		Use:   "list",
		Short: "List queues",
		Example: `  lethe queue list
  lethe queue list --json | jq -r '.[].name'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context(), cmd.OutOrStdout())
		},
	}
}

func (o *queueListOptions) Validate() error { return nil }

func (o *queueListOptions) Run(ctx context.Context, w io.Writer) error {
	c, err := o.newClient()
	if err != nil {
		return err
	}
	qs, err := c.ListQueues(ctx, client.ListQueuesOptions{})
	if err != nil {
		return o.explain(err)
	}
	if o.json {
		return printJSON(w, qs)
	}
	return printQueueTable(w, qs)
}

func printQueueTable(w io.Writer, qs []client.Queue) error {
	if len(qs) == 0 {
		_, err := fmt.Fprintln(w, "no queues yet: push a message or run `lethe queue configure NAME`")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tPARTITIONS\tMESSAGES\tLEASE-TIME\tRETRY-LIMIT\tRETENTION\tCREATED")
	for _, q := range qs {
		retention := "off"
		if q.Options.RetentionEnabled {
			retention = "on"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%ds\t%d\t%s\t%s\n", q.Name, q.Partitions, q.Messages,
			q.Options.LeaseTime, q.Options.RetryLimit, retention, q.CreatedAt.Local().Format(time.DateTime))
	}
	return tw.Flush()
}

package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/lethe-mq/lethe/client"
)

type queueShowOptions struct {
	*clientFlags
	queue string
}

func newQueueShowCmd(f *clientFlags) *cobra.Command {
	o := &queueShowOptions{clientFlags: f}
	return &cobra.Command{
		Use:   "show QUEUE",
		Short: "Show a queue and its options",
		Example: `  lethe queue show orders
  lethe queue show orders --json | jq .options`,
		Args:              oneArg("queue name", "lethe queue show QUEUE"),
		ValidArgsFunction: f.completeQueue,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.queue = args[0]
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context(), cmd.OutOrStdout())
		},
	}
}

func (o *queueShowOptions) Validate() error { return nil }

func (o *queueShowOptions) Run(ctx context.Context, w io.Writer) error {
	c, err := o.newClient()
	if err != nil {
		return err
	}
	q, err := c.GetQueue(ctx, o.queue)
	if client.IsNotFound(err) {
		return fmt.Errorf("queue %s does not exist: see `lethe queue list`", o.queue)
	}
	if err != nil {
		return o.explain(err)
	}
	if o.json {
		return printJSON(w, q)
	}
	fmt.Fprintf(w, "queue       %s\n", q.Name)
	if q.Namespace != "" {
		fmt.Fprintf(w, "namespace   %s\n", q.Namespace)
	}
	if q.Task != "" {
		fmt.Fprintf(w, "task        %s\n", q.Task)
	}
	fmt.Fprintf(w, "partitions  %d\n", q.Partitions)
	fmt.Fprintf(w, "messages    %d\n", q.Messages)
	fmt.Fprintf(w, "created     %s\n", q.CreatedAt.Local().Format(time.DateTime))
	fmt.Fprintf(w, "updated     %s\n", q.UpdatedAt.Local().Format(time.DateTime))
	fmt.Fprintln(w, "options:")
	return printQueueOptions(w, q.Options)
}

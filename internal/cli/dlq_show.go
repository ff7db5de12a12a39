package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/lethe-mq/lethe/client/api"
)

type dlqShowOptions struct {
	*clientFlags
	id     string
	filter dlqFilter
}

func newDLQShowCmd(f *clientFlags) *cobra.Command {
	o := &dlqShowOptions{clientFlags: f}
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show one dead letter with its payload and error",
		Long: `Show one dead letter, with its payload and the error it failed with.
The server has no route for one dead letter, so show pages through the
list; --queue (and the other filters) make that shorter.`,
		Example: `  lethe dlq show 42
  lethe dlq show 42 --queue orders --json | jq .data`,
		Args: oneArg("dead letter id", "lethe dlq show ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.id = args[0]
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context(), cmd.OutOrStdout())
		},
	}
	o.filter.addFlags(cmd, f)
	return cmd
}

func (o *dlqShowOptions) Validate() error { return validateDeadLetterIDs([]string{o.id}) }

func (o *dlqShowOptions) Run(ctx context.Context, w io.Writer) error {
	q, err := o.filter.query(time.Now())
	if err != nil {
		return err
	}
	c, err := o.newClient()
	if err != nil {
		return err
	}
	var found *api.DeadLetter
	err = eachDeadLetter(ctx, c, q, func(d api.DeadLetter) bool {
		if d.ID == o.id {
			found = &d
		}
		return found == nil
	})
	if err != nil {
		return o.explain(err)
	}
	if found == nil {
		return fmt.Errorf("dead letter %s does not exist (replayed or deleted already?): see `lethe dlq list`", o.id)
	}
	if o.json {
		return printJSON(w, found)
	}
	return printDeadLetter(w, found)
}

func printDeadLetter(w io.Writer, d *api.DeadLetter) error {
	fmt.Fprintf(w, "dead letter  %s\n", d.ID)
	fmt.Fprintf(w, "queue        %s, partition %s (%s)\n", d.Queue, d.Partition, d.PartitionID)
	fmt.Fprintf(w, "group        %s\n", groupLabel(d.ConsumerGroup))
	fmt.Fprintf(w, "message      offset %d, transaction %s\n", d.Offset, d.TransactionID)
	if d.TraceID != "" {
		fmt.Fprintf(w, "trace        %s\n", d.TraceID)
	}
	fmt.Fprintf(w, "created      %s\n", d.CreatedAt.Local().Format(time.DateTime))
	fmt.Fprintf(w, "failed       %s, retry count %d\n", d.FailedAt.Local().Format(time.DateTime), d.RetryCount)
	fmt.Fprintf(w, "error        %s\n", d.ErrorMessage)
	if d.Data == nil {
		_, err := fmt.Fprintln(w, "data         none (its segment was gone when it failed: nothing to replay)")
		return err
	}
	var pretty bytes.Buffer
	if json.Indent(&pretty, d.Data, "", "  ") != nil {
		pretty.Reset()
		pretty.Write(d.Data)
	}
	_, err := fmt.Fprintf(w, "data\n%s\n", pretty.String())
	return err
}

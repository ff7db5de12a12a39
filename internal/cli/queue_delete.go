package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/lethe-mq/lethe/client"
)

type queueDeleteOptions struct {
	*clientFlags
	queue string
	yes   bool
}

func newQueueDeleteCmd(f *clientFlags) *cobra.Command {
	o := &queueDeleteOptions{clientFlags: f}
	cmd := &cobra.Command{
		Use:   "delete QUEUE --yes",
		Short: "Delete a queue and all its messages (needs the operator token when auth is on)",
		Example: `  lethe queue delete orders --yes
  lethe queue delete orders --yes --operator-token "$OPERATOR_TOKEN"`,
		Args:              oneArg("queue name", "lethe queue delete QUEUE --yes"),
		ValidArgsFunction: f.completeQueue,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.queue = args[0]
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context(), cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&o.yes, "yes", false, "really delete: the queue's messages cannot be recovered")
	return cmd
}

func (o *queueDeleteOptions) Validate() error {
	if !o.yes {
		return fmt.Errorf("not deleting queue %s: this deletes all its messages for good; add --yes to confirm", o.queue)
	}
	return nil
}

func (o *queueDeleteOptions) Run(ctx context.Context, w io.Writer) error {
	c, err := o.newOperatorClient()
	if err != nil {
		return err
	}
	err = c.DeleteQueue(ctx, o.queue)
	if client.IsNotFound(err) {
		return fmt.Errorf("queue %s does not exist: see `lethe queue list`", o.queue)
	}
	if err != nil {
		return o.explain(err)
	}
	if o.json {
		return printJSON(w, map[string]any{"deleted": true, "queue": o.queue})
	}
	_, err = fmt.Fprintf(w, "deleted queue %s\n", o.queue)
	return err
}

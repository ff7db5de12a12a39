package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/lethe-mq/lethe/client"
	"github.com/lethe-mq/lethe/client/api"
)

type statusOptions struct {
	clientFlags
}

func newStatusCmd() *cobra.Command {
	o := &statusOptions{}
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show a running lethe's status",
		Example: `  lethe status
  lethe status --server http://lethe.internal:6632 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context(), cmd.OutOrStdout())
		},
	}
	addClientFlags(cmd, &o.clientFlags)
	return cmd
}

func (o *statusOptions) Validate() error { return nil }

// basicStatus is what status shows of a server without /api/v1/status.
type basicStatus struct {
	Health *client.Health `json:"health"`
	Queues []client.Queue `json:"queues"`
}

func (o *statusOptions) Run(ctx context.Context, w io.Writer) error {
	c, err := o.newClient()
	if err != nil {
		return err
	}
	var st api.Status
	err = c.Do(ctx, http.MethodGet, "/api/v1/status", nil, &st)
	if client.IsNotFound(err) {
		return o.runBasic(ctx, c, w)
	}
	if err != nil {
		return o.explain(err)
	}
	if o.json {
		return printJSON(w, st)
	}
	return printStatus(w, o.server, st)
}

func printStatus(w io.Writer, server string, st api.Status) error {
	up := (time.Duration(st.UptimeSeconds) * time.Second).String()
	fmt.Fprintf(w, "lethe at %s: %s, up %s (since %s)\n", server, st.Version, up, st.StartedAt.Local().Format(time.DateTime))
	fmt.Fprintf(w, "queues          %d (%d partitions, %d namespaces, %d tasks)\n", st.Queues, st.Partitions, st.Namespaces, st.Tasks)
	fmt.Fprintf(w, "messages        %d stored, %s on disk\n", st.Messages.Total, retentionBytes(st.Bytes))
	fmt.Fprintf(w, "dead letters    %d\n", st.DeadLetters)
	_, err := fmt.Fprintf(w, "consumer groups %d, %d active lease%s\n", st.ConsumerGroups, st.ActiveLeases, plural(int(st.ActiveLeases)))
	return err
}

// runBasic shows health and queues, for servers without /api/v1/status.
func (o *statusOptions) runBasic(ctx context.Context, c *client.Client, w io.Writer) error {
	h, err := c.Health(ctx)
	if err != nil {
		return o.explain(err)
	}
	qs, err := c.ListQueues(ctx, client.ListQueuesOptions{})
	if err != nil {
		return o.explain(err)
	}
	if o.json {
		return printJSON(w, basicStatus{Health: h, Queues: qs})
	}
	fmt.Fprintf(w, "lethe at %s: %s", o.server, h.Status)
	if h.Database != "" {
		fmt.Fprintf(w, ", database %s", h.Database)
	}
	if h.UptimeSeconds > 0 {
		fmt.Fprintf(w, ", up %ds", h.UptimeSeconds)
	}
	var messages int64
	for _, q := range qs {
		messages += q.Messages
	}
	fmt.Fprintf(w, "\n%d queue%s, %d message%s\n", len(qs), plural(len(qs)), messages, plural(int(messages)))
	if len(qs) == 0 {
		return nil
	}
	return printQueueTable(w, qs)
}

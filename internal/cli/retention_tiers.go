package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/lethe-mq/lethe/client/api"
)

// addTierCommands makes `lethe retention` show the time partitions, the
// held area and tier changes, and adds explain and confirm.
func addTierCommands(cmd *cobra.Command) {
	o := &retentionViewOptions{}
	cmd.Args = cobra.NoArgs
	cmd.RunE = func(cmd *cobra.Command, _ []string) error { return o.Run(cmd.Context(), cmd.OutOrStdout()) }
	addClientFlags(cmd, &o.clientFlags)
	cmd.AddCommand(newRetentionExplainCmd(), newRetentionConfirmCmd())
	cmd.Short += ", time partitions and tier changes"
	cmd.Example = "  lethe retention\n" + cmd.Example
	cmd.Long += `
  lethe retention                   time partitions (tier, range, rows, bytes, drop time), the held area by month and queue, tier changes
  lethe retention explain QUEUE     every rule that deletes the queue's messages, with its bounds
  lethe retention confirm QUEUE     apply a shorter retentionTier that waits for confirmation (operator token)`
}

type retentionViewOptions struct{ clientFlags }

func (o *retentionViewOptions) Run(ctx context.Context, w io.Writer) error {
	c, err := o.newClient()
	if err != nil {
		return err
	}
	var v api.RetentionView
	if err := c.Do(ctx, http.MethodGet, "/api/v1/retention/tiers", nil, &v); err != nil {
		return o.explain(err)
	}
	if o.json {
		return printJSON(w, v)
	}
	tw := tabwriter.NewWriter(w, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, "PARTITION\tTIER\tFROM\tTO\tROWS\tBYTES\tDROPS AT")
	for _, p := range v.Partitions {
		drops := "-"
		if p.DropsAt != nil {
			drops = p.DropsAt.Format(time.DateTime)
		} else if p.State != "attached" {
			drops = p.State
		}
		from := "-"
		if !p.From.IsZero() {
			from = p.From.Format(time.DateOnly)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", p.Name, p.Tier, from, p.To.Format(time.DateOnly), max(p.Rows, 0),
			humanBytes(p.Bytes), drops)
	}
	_ = tw.Flush()
	fmt.Fprintln(w)
	if len(v.Held) == 0 {
		fmt.Fprintln(w, "held area: empty")
	} else {
		fmt.Fprintln(tw, "HELD MONTH\tQUEUE\tMESSAGES\tBYTES\tQUARANTINED\tPENDING")
		for _, h := range v.Held {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%d\t%s\n", h.Month, h.Queue, h.Messages, humanBytes(h.Bytes), h.Quarantined, pendingText(h.Pending))
		}
		_ = tw.Flush()
	}
	fmt.Fprintln(w)
	if len(v.Changes) == 0 {
		fmt.Fprintln(w, "tier changes: none")
	}
	for _, ch := range v.Changes {
		fmt.Fprintf(w, "%s: %s -> %s %s: delete %d, move %d, hold %d; done %d, %d messages left",
			ch.Queue, ch.From, ch.To, ch.State, ch.Delete.Messages, ch.Move.Messages, ch.Hold.Messages,
			ch.Deleted+ch.Moved+ch.Held, ch.Left)
		if ch.Next != "" {
			fmt.Fprintf(w, "; then %s waits", ch.Next)
		}
		fmt.Fprintln(w)
	}
	return nil
}

func pendingText(p map[string]int64) string {
	var parts []string
	for g, n := range p {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", g, n))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " ")
}

type retentionExplainOptions struct {
	clientFlags
	queue string
}

func newRetentionExplainCmd() *cobra.Command {
	o := &retentionExplainOptions{}
	cmd := &cobra.Command{
		Use:   "explain QUEUE",
		Short: "State every rule that deletes a queue's messages, with the bounds of a message's life",
		Example: `  lethe retention explain orders
  lethe retention explain orders --json`,
		Args: oneArg("a queue", "lethe retention explain orders"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.queue = args[0]
			return o.Run(cmd.Context(), cmd.OutOrStdout())
		},
	}
	addClientFlags(cmd, &o.clientFlags)
	return cmd
}

func (o *retentionExplainOptions) Run(ctx context.Context, w io.Writer) error {
	c, err := o.newClient()
	if err != nil {
		return err
	}
	var x api.RetentionExplain
	if err := c.Do(ctx, http.MethodGet, "/api/v1/retention/explain/"+url.PathEscape(o.queue), nil, &x); err != nil {
		return o.explain(err)
	}
	if o.json {
		return printJSON(w, x)
	}
	fmt.Fprintf(w, "%s: tier %s, quarantined %s", x.Queue, x.Tier, x.Quarantined)
	if len(x.Required) > 0 {
		fmt.Fprintf(w, ", required groups %s", strings.Join(x.Required, ", "))
	}
	fmt.Fprintln(w)
	for _, b := range x.Bounds {
		fmt.Fprintf(w, "  - %s\n", b.Text)
	}
	if len(x.Bounds) > 1 {
		fmt.Fprintln(w, "  All apply: whichever deletes a message first wins.")
	}
	if x.Change != nil {
		printChange(w, x.Change)
	}
	return nil
}

type retentionConfirmOptions struct {
	clientFlags
	queue  string
	noWait bool
	every  time.Duration
	errOut io.Writer // the progress bar's
}

func newRetentionConfirmCmd() *cobra.Command {
	o := &retentionConfirmOptions{every: time.Second}
	cmd := &cobra.Command{
		Use:   "confirm QUEUE",
		Short: "Apply the shorter retentionTier waiting for confirmation on a queue (operator token), with a progress bar",
		Example: `  lethe retention confirm orders --operator-token "$OP_TOKEN"
  lethe retention confirm orders --no-wait`,
		Args: oneArg("a queue", "lethe retention confirm orders"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.queue, o.errOut = args[0], cmd.ErrOrStderr()
			return o.Run(cmd.Context(), cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&o.noWait, "no-wait", false, "confirm and return; do not follow the change's progress")
	addClientFlags(cmd, &o.clientFlags)
	return cmd
}

func (o *retentionConfirmOptions) Run(ctx context.Context, w io.Writer) error {
	c, err := o.newOperatorClient()
	if err != nil {
		return err
	}
	var ch api.RetentionChange
	if err := c.Do(ctx, http.MethodPost, "/api/v1/retention/changes/"+url.PathEscape(o.queue)+"/confirm", nil, &ch); err != nil {
		return o.explain(err)
	}
	if o.json && o.noWait {
		return printJSON(w, ch)
	}
	total := ch.Delete.Messages + ch.Move.Messages + ch.Hold.Messages
	fmt.Fprintf(w, "%s: %s -> %s confirmed: deleting %d messages (%s), moving %d (%d to the held area)\n",
		ch.Queue, ch.From, ch.To, ch.Delete.Messages, humanBytes(ch.Delete.Bytes), ch.Move.Messages+ch.Hold.Messages, ch.Hold.Messages)
	if o.noWait {
		return nil
	}
	return o.follow(ctx, w, total)
}

// follow shows the change's progress (messages settled of those announced)
// on stderr until it is done.
func (o *retentionConfirmOptions) follow(ctx context.Context, w io.Writer, total int64) error {
	c, err := o.newClient()
	if err != nil {
		return err
	}
	bar := newProgress(o.errOut, "settling "+o.queue, int(total))
	defer bar.Finish()
	for {
		var v api.RetentionView
		if err := c.Do(ctx, http.MethodGet, "/api/v1/retention/tiers", nil, &v); err != nil {
			return o.explain(err)
		}
		var cur *api.RetentionChange
		for i := range v.Changes {
			if v.Changes[i].Queue == o.queue && v.Changes[i].State == "running" {
				cur = &v.Changes[i]
			}
		}
		if cur == nil {
			bar.Add(bar.total - bar.done)
			fmt.Fprintf(w, "%s: the change is done\n", o.queue)
			return nil
		}
		if n := int(total-cur.Left) - bar.done; n > 0 {
			bar.Add(n)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("stopped following; the change goes on in the background (lethe retention shows it): %w", ctx.Err())
		case <-time.After(o.every):
		}
	}
}

package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/lethe-mq/lethe/client/api"
)

// addHoldCommands adds hold, release and holds to `lethe retention`.
func addHoldCommands(cmd *cobra.Command) {
	cmd.AddCommand(newRetentionHoldCmd(), newRetentionReleaseCmd(), newRetentionHoldsCmd())
	cmd.Long += `
  lethe retention hold QUEUE --reason R   stop every deletion of the queue's messages until released (operator token)
  lethe retention release ID              release a hold: the queue's rules apply again (operator token)
  lethe retention holds [QUEUE]           the active holds (--released: all)`
}

type holdOptions struct {
	clientFlags
	queue, reason string
}

func newRetentionHoldCmd() *cobra.Command {
	o := &holdOptions{}
	cmd := &cobra.Command{
		Use:   "hold QUEUE --reason R",
		Short: "Stop every deletion of a queue's messages until the hold is released (operator token)",
		Long: `Put QUEUE under a retention hold: while it stands no rule deletes any of the
queue's messages or dead letters (the seconds rules do nothing, the tiers
move its messages to the held area instead of dropping them), and the
queue cannot be deleted. The hold records who placed it, when and why.`,
		Example: `  lethe retention hold orders --reason "legal hold, case 2031-17"`,
		Args:    oneArg("a queue", `lethe retention hold orders --reason "legal hold"`),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.queue = args[0]
			if o.reason == "" {
				return fmt.Errorf("--reason is required: say why the queue is held (it is kept with the hold)")
			}
			return o.Run(cmd.Context(), cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&o.reason, "reason", "", "why the queue is held (required, kept with the hold)")
	addClientFlags(cmd, &o.clientFlags)
	return cmd
}

func (o *holdOptions) Run(ctx context.Context, w io.Writer) error {
	c, err := o.newOperatorClient()
	if err != nil {
		return err
	}
	var h api.RetentionHold
	if err := c.Do(ctx, http.MethodPost, "/api/v1/retention/holds", api.PlaceHoldRequest{Queue: o.queue, Reason: o.reason}, &h); err != nil {
		return o.explain(err)
	}
	if o.json {
		return printJSON(w, h)
	}
	_, err = fmt.Fprintf(w, "hold %d placed on %s: nothing of it is deleted until `lethe retention release %d`\n", h.ID, h.Queue, h.ID)
	return err
}

type releaseOptions struct {
	clientFlags
	id int64
}

func newRetentionReleaseCmd() *cobra.Command {
	o := &releaseOptions{}
	cmd := &cobra.Command{
		Use:     "release ID",
		Short:   "Release a retention hold: the queue's rules apply again from the next cycle (operator token)",
		Example: `  lethe retention release 3`,
		Args:    oneArg("a hold id", "lethe retention release 3"),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := strconv.ParseInt(args[0], 10, 64)
			if err != nil || id < 1 {
				return fmt.Errorf("a hold id is a positive whole number (see `lethe retention holds`), got %q", args[0])
			}
			o.id = id
			return o.Run(cmd.Context(), cmd.OutOrStdout())
		},
	}
	addClientFlags(cmd, &o.clientFlags)
	return cmd
}

func (o *releaseOptions) Run(ctx context.Context, w io.Writer) error {
	c, err := o.newOperatorClient()
	if err != nil {
		return err
	}
	var h api.RetentionHold
	if err := c.Do(ctx, http.MethodDelete, "/api/v1/retention/holds/"+strconv.FormatInt(o.id, 10), nil, &h); err != nil {
		return o.explain(err)
	}
	if o.json {
		return printJSON(w, h)
	}
	_, err = fmt.Fprintf(w, "hold %d on %s released: its rules apply again from the next cycle\n", h.ID, h.Queue)
	return err
}

type holdsOptions struct {
	clientFlags
	queue    string
	released bool
}

func newRetentionHoldsCmd() *cobra.Command {
	o := &holdsOptions{}
	cmd := &cobra.Command{
		Use:     "holds [QUEUE]",
		Short:   "List the retention holds (the active ones; --released: all)",
		Example: "  lethe retention holds\n  lethe retention holds orders --released",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.queue = args[0]
			}
			return o.Run(cmd.Context(), cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&o.released, "released", false, "list released holds too")
	addClientFlags(cmd, &o.clientFlags)
	return cmd
}

func (o *holdsOptions) Run(ctx context.Context, w io.Writer) error {
	c, err := o.newClient()
	if err != nil {
		return err
	}
	q := url.Values{}
	if o.queue != "" {
		q.Set("queue", o.queue)
	}
	if o.released {
		q.Set("released", "true")
	}
	var res struct {
		Holds []api.RetentionHold `json:"holds"`
	}
	if err := c.Do(ctx, http.MethodGet, "/api/v1/retention/holds?"+q.Encode(), nil, &res); err != nil {
		return o.explain(err)
	}
	if o.json {
		return printJSON(w, res.Holds)
	}
	if len(res.Holds) == 0 {
		_, err := fmt.Fprintln(w, "no retention holds")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tQUEUE\tSTATE\tPLACED\tBY\tREASON")
	for _, h := range res.Holds {
		state := "active"
		if !h.Active {
			state = "released " + h.ReleasedAt.Local().Format(time.DateTime)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", h.ID, h.Queue, state, h.PlacedAt.Local().Format(time.DateTime), h.PlacedBy, h.Reason)
	}
	return tw.Flush()
}

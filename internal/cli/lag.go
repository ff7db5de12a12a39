package cli

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/lethe-mq/lethe/client"
	"github.com/lethe-mq/lethe/client/api"
)

// groupsPage is the server's largest page of consumer groups.
const groupsPage = 1000

type lagOptions struct {
	clientFlags
	queue string
}

func newLagCmd() *cobra.Command {
	o := &lagOptions{}
	cmd := &cobra.Command{
		Use:   "lag [QUEUE]",
		Short: "Show how far behind each consumer group is, per queue",
		Long: `Show each consumer group of each queue (or of QUEUE) with its lag: the
messages it has not consumed yet and the age of the oldest of them.
STATE is Lagging past 5 minutes of time lag, Stable when it has consumed,
Dead when it never has. TIME-TO-LOSS is how long until the queue's
retentionSeconds or maxWaitTimeSeconds deletes the oldest message the group
has not read ("now": the next retention cycle does; "-": nothing unread, or
no rule deletes unread data). "(queue mode)" is the shared cursor of pops
that name no group.`,
		Example: `  lethe lag
  lethe lag orders
  lethe lag --json | jq '.[] | select(.state == "Lagging")'`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: o.completeQueue,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.queue = args[0]
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context(), cmd.OutOrStdout())
		},
	}
	addClientFlags(cmd, &o.clientFlags)
	return cmd
}

func (o *lagOptions) Validate() error { return nil }

func (o *lagOptions) Run(ctx context.Context, w io.Writer) error {
	c, err := o.newClient()
	if err != nil {
		return err
	}
	groups, err := o.load(ctx, c)
	if err != nil {
		return o.explain(err)
	}
	if o.queue != "" && len(groups) == 0 {
		if _, err := c.GetQueue(ctx, o.queue); client.IsNotFound(err) {
			return fmt.Errorf("queue %s does not exist: see `lethe queue list`", o.queue)
		}
	}
	if o.json {
		return printJSON(w, groups)
	}
	return printLag(w, o.queue, groups)
}

// load reads every (group, queue) pair, of o.queue only when set, ordered
// by queue then group.
func (o *lagOptions) load(ctx context.Context, c *client.Client) ([]api.GroupSummary, error) {
	out := []api.GroupSummary{}
	for offset := 0; ; offset += groupsPage {
		var page []api.GroupSummary
		path := "/api/v1/consumer-groups?limit=" + strconv.Itoa(groupsPage) + "&offset=" + strconv.Itoa(offset)
		if err := c.Do(ctx, http.MethodGet, path, nil, &page); err != nil {
			return nil, err
		}
		for _, g := range page {
			if o.queue == "" || g.QueueName == o.queue {
				out = append(out, g)
			}
		}
		if len(page) < groupsPage {
			break
		}
	}
	slices.SortFunc(out, func(a, b api.GroupSummary) int {
		return cmp.Or(cmp.Compare(a.QueueName, b.QueueName), cmp.Compare(a.Name, b.Name))
	})
	return out, nil
}

func printLag(w io.Writer, queue string, groups []api.GroupSummary) error {
	if len(groups) == 0 {
		where := ""
		if queue != "" {
			where = " on " + queue
		}
		_, err := fmt.Fprintf(w, "no consumer groups%s yet: pop with --group to start one\n", where)
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "QUEUE\tGROUP\tSTATE\tLAG\tTIME-LAG\tTIME-TO-LOSS\tPARTITIONS-BEHIND\tLEASES\tLAST-CONSUMED")
	for _, g := range groups {
		last := "never"
		if g.LastConsumedAt != nil {
			last = g.LastConsumedAt.Local().Format(time.DateTime)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%d/%d\t%d\t%s\n", g.QueueName, groupLabel(g.Name), g.State, g.TotalLag,
			ageString(g.MaxTimeLag), timeToLoss(g.TimeToLossSeconds), g.PartitionsWithLag, g.Partitions, g.LeasesHeld, last)
	}
	return tw.Flush()
}

// timeToLoss writes how long until a group loses unread messages.
func timeToLoss(seconds *int64) string {
	switch {
	case seconds == nil:
		return "-"
	case *seconds == 0:
		return "now"
	}
	return ageString(*seconds)
}

// groupLabel names queue mode's shared cursor for people.
func groupLabel(name string) string {
	if name == api.QueueModeGroup {
		return "(queue mode)"
	}
	return name
}

// ageString writes seconds as the two largest units: 42s, 5m3s, 2h10m, 3d4h.
func ageString(seconds int64) string {
	d := time.Duration(seconds) * time.Second
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", seconds)
	case d < time.Hour:
		return fmt.Sprintf("%dm%ds", seconds/60, seconds%60)
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh%dm", seconds/3600, seconds%3600/60)
	}
	return fmt.Sprintf("%dd%dh", seconds/86400, seconds%86400/3600)
}

package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
)

// dlqErrorWidth is how much of a failure's message the list shows.
const dlqErrorWidth = 60

type dlqListOptions struct {
	*clientFlags
	filter dlqFilter
	limit  int
	offset int
}

func newDLQListCmd(f *clientFlags) *cobra.Command {
	o := &dlqListOptions{clientFlags: f}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List dead letters, the most recently failed first",
		Example: `  lethe dlq list
  lethe dlq list --queue orders --group billing --from 24h
  lethe dlq list --queue orders --json | jq -r '.messages[].id'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context(), cmd.OutOrStdout())
		},
	}
	o.filter.addFlags(cmd, f)
	cmd.Flags().IntVar(&o.limit, "limit", 50, "most dead letters to show (1 to 1000)")
	cmd.Flags().IntVar(&o.offset, "offset", 0, "skip this many first")
	return cmd
}

func (o *dlqListOptions) Validate() error {
	if o.limit < 1 || o.limit > dlqPage {
		return fmt.Errorf("--limit must be between 1 and %d, got %d", dlqPage, o.limit)
	}
	if o.offset < 0 {
		return fmt.Errorf("--offset must be 0 or more, got %d", o.offset)
	}
	return nil
}

func (o *dlqListOptions) Run(ctx context.Context, w io.Writer) error {
	q, err := o.filter.query(time.Now())
	if err != nil {
		return err
	}
	c, err := o.newClient()
	if err != nil {
		return err
	}
	page, err := listDeadLetters(ctx, c, q, o.limit, o.offset)
	if err != nil {
		return o.explain(err)
	}
	if o.json {
		return printJSON(w, page)
	}
	if page.Total == 0 {
		_, err := fmt.Fprintln(w, "no dead letters")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tFAILED\tQUEUE/PARTITION\tGROUP\tOFFSET\tRETRIES\tERROR")
	for _, d := range page.Messages {
		fmt.Fprintf(tw, "%s\t%s\t%s/%s\t%s\t%d\t%d\t%s\n", d.ID, d.FailedAt.Local().Format(time.DateTime), d.Queue, d.Partition,
			groupLabel(d.ConsumerGroup), d.Offset, d.RetryCount, clip(d.ErrorMessage, dlqErrorWidth))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	shown := int64(o.offset + len(page.Messages))
	if shown < page.Total {
		_, err = fmt.Fprintf(w, "%d to %d of %d dead letters: see more with --offset %d\n", o.offset+1, shown, page.Total, shown)
	} else {
		_, err = fmt.Fprintf(w, "%d dead letter%s\n", page.Total, plural(int(page.Total)))
	}
	return err
}

// clip shortens s to n runes on one line.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

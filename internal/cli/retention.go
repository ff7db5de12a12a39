package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lethe-mq/lethe/client/api"
)

func newRetentionCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "retention",
		Short: "Inspect the retention loop: plan, audit history",
		Long: `Inspect what lethe's retention loop keeps and deletes (docs/retention.md).

  lethe retention status [queue]    rules, cutoffs, footprint and a dry run of the next cycle
  lethe retention history [queue]   what was deleted, and what each consumer group lost unread`,
		Example: `  lethe retention status orders
  lethe retention history --lost-only --since 24h`,
	}
	cmd.AddCommand(newRetentionStatusCmd(), newRetentionHistoryCmd())
	addTierCommands(cmd)
	addHoldCommands(cmd)
	return cmd
}

type retentionStatusOptions struct {
	clientFlags
	queue string
}

func newRetentionStatusCmd() *cobra.Command {
	o := &retentionStatusOptions{}
	cmd := &cobra.Command{
		Use:   "status [queue]",
		Short: "Show each queue's rules, cutoffs, oldest data, bytes and what the next cycle would delete",
		Example: `  lethe retention status
  lethe retention status orders --json | jq .queues[0].nextCycle`,
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

func (o *retentionStatusOptions) Validate() error {
	if strings.TrimSpace(o.queue) != o.queue {
		return fmt.Errorf("queue %q has leading or trailing spaces; quote the exact name", o.queue)
	}
	return nil
}

func (o *retentionStatusOptions) Run(ctx context.Context, w io.Writer) error {
	c, err := o.newClient()
	if err != nil {
		return err
	}
	path := "/api/v1/retention/status"
	if o.queue != "" {
		path += "?queue=" + url.QueryEscape(o.queue)
	}
	var st api.RetentionStatus
	if err := c.Do(ctx, http.MethodGet, path, nil, &st); err != nil {
		return o.explain(err)
	}
	if o.json {
		return printJSON(w, st)
	}
	if len(st.Queues) == 0 {
		fmt.Fprintln(w, "no queues")
	}
	for i, q := range st.Queues {
		if i > 0 {
			fmt.Fprintln(w)
		}
		printQueueRetention(w, q)
	}
	if o.queue == "" {
		printStorage(ctx, w, c)
	}
	return nil
}

func printQueueRetention(w io.Writer, q api.RetentionQueueStatus) {
	fmt.Fprintf(w, "queue %s\n", q.Queue)
	fmt.Fprintf(w, "  rules       %s\n", retentionRules(q.Rules))
	if len(q.Holds) > 0 {
		fmt.Fprintf(w, "  held        by hold %v: nothing of the queue is deleted until released (lethe retention holds)\n", q.Holds)
	}
	fmt.Fprintf(w, "  cutoffs     retention %s, completed %s, max wait %s, hashes %s\n",
		retentionTime(q.Cutoffs.Retention), retentionTime(q.Cutoffs.CompletedRetention), retentionTime(q.Cutoffs.MaxWait),
		q.Cutoffs.Hashes.Format(time.RFC3339))
	fmt.Fprintf(w, "  footprint   %d partitions (%d empty), %d segments, %d messages, %s, %d hashes\n",
		q.Partitions, q.EmptyPartitions, q.Segments, q.Messages, retentionBytes(q.Bytes), q.Hashes)
	switch {
	case q.OldestMessageAt != nil && len(q.Holds) > 0:
		// Held, no rule has a window: how far past one the data is would
		// read as 0 s for data of any age.
		fmt.Fprintf(w, "  oldest      %s (%s old; kept by the hold, no rule's window applies)\n", q.OldestMessageAt.Format(time.RFC3339),
			retentionAge(q.OldestAgeSeconds))
	case q.OldestMessageAt != nil:
		fmt.Fprintf(w, "  oldest      %s (%s old, %s past its window)\n", q.OldestMessageAt.Format(time.RFC3339),
			retentionAge(q.OldestAgeSeconds), retentionAge(q.WindowLagSeconds))
	default:
		fmt.Fprintln(w, "  oldest      no messages stored")
	}
	p := q.NextCycle
	more := ""
	if p.Truncated {
		more = " (at least: the dry run stopped at its segment limit)"
	}
	fmt.Fprintf(w, "  next cycle  retention %s, completed retention %s, max wait %s; %d hashes, %d idle empty partitions%s\n",
		retentionAmount(p.Retention), retentionAmount(p.CompletedRetention), retentionAmount(p.MaxWait), p.Hashes, p.Partitions, more)
}

func retentionRules(r api.RetentionRules) string {
	var parts []string
	if r.RetentionEnabled && r.RetentionSeconds > 0 {
		parts = append(parts, fmt.Sprintf("retention %ds", r.RetentionSeconds))
	}
	if r.RetentionEnabled && r.CompletedRetentionSeconds > 0 {
		parts = append(parts, fmt.Sprintf("completed retention %ds", r.CompletedRetentionSeconds))
	}
	if r.MaxWaitTimeSeconds > 0 {
		parts = append(parts, fmt.Sprintf("max wait %ds (evicts unread messages)", r.MaxWaitTimeSeconds))
	}
	if len(parts) == 0 {
		if r.RetentionEnabled {
			return "retentionEnabled but no window: keeps everything"
		}
		return "none: keeps everything"
	}
	return strings.Join(parts, ", ")
}

func retentionTime(t *time.Time) string {
	if t == nil {
		return "off"
	}
	return t.Format(time.RFC3339)
}

func retentionAmount(a api.RetentionAmount) string {
	if a.Segments == 0 {
		return "nothing"
	}
	return fmt.Sprintf("%d messages in %d segments (%s)", a.Frames, a.Segments, retentionBytes(a.Bytes))
}

func retentionAge(s float64) string {
	return (time.Duration(s) * time.Second).Round(time.Second).String()
}

func retentionBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

type retentionHistoryOptions struct {
	clientFlags
	queue    string
	rule     string
	lostOnly bool
	limit    int
	since    time.Duration
}

func newRetentionHistoryCmd() *cobra.Command {
	o := &retentionHistoryOptions{}
	cmd := &cobra.Command{
		Use:   "history [queue]",
		Short: "List what retention deleted, newest first, with what each consumer group lost unread",
		Example: `  lethe retention history orders
  lethe retention history --rule max_wait --lost-only --since 72h`,
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
	cmd.Flags().StringVar(&o.rule, "rule", "", "only this rule: "+strings.Join(api.HistoryRules, ", "))
	cmd.Flags().BoolVar(&o.lostOnly, "lost-only", false, "only deletions some consumer group had not consumed")
	cmd.Flags().IntVar(&o.limit, "limit", 50, "most rows to show (1 to 1000)")
	cmd.Flags().DurationVar(&o.since, "since", 7*24*time.Hour, "how far back to look")
	return cmd
}

func (o *retentionHistoryOptions) Validate() error {
	if o.rule != "" && !slices.Contains(api.HistoryRules, o.rule) {
		return fmt.Errorf("--rule must be one of %s, got %q", strings.Join(api.HistoryRules, ", "), o.rule)
	}
	if o.limit < 1 || o.limit > 1000 {
		return fmt.Errorf("--limit must be between 1 and 1000, got %d", o.limit)
	}
	if o.since <= 0 {
		return fmt.Errorf("--since must be a positive duration such as 24h, got %s", o.since)
	}
	return nil
}

func (o *retentionHistoryOptions) Run(ctx context.Context, w io.Writer) error {
	c, err := o.newClient()
	if err != nil {
		return err
	}
	q := url.Values{}
	// The server's clock decides what "since" ends at.
	q.Set("since", o.since.String())
	q.Set("limit", strconv.Itoa(o.limit))
	if o.queue != "" {
		q.Set("queue", o.queue)
	}
	if o.rule != "" {
		q.Set("rule", o.rule)
	}
	if o.lostOnly {
		q.Set("lostOnly", "true")
	}
	var out api.RetentionHistory
	if err := c.Do(ctx, http.MethodGet, "/api/v1/retention/history?"+q.Encode(), nil, &out); err != nil {
		return o.explain(err)
	}
	if o.json {
		return printJSON(w, out)
	}
	if len(out.Entries) == 0 {
		fmt.Fprintln(w, "nothing deleted in that time")
		return nil
	}
	for _, e := range out.Entries {
		printHistoryEntry(w, e)
	}
	return nil
}

// printHistoryEntry prints one decision: queue/partition and its offsets
// when it covered one partition, else the partitions it listed; then each
// group's unread loss.
func printHistoryEntry(w io.Writer, e api.RetentionHistoryEntry) {
	where, rng := e.Queue+"/"+e.Partition, ""
	if e.FromOffset != nil && e.ToOffset != nil {
		rng = fmt.Sprintf(" offsets %d..%d", *e.FromOffset, *e.ToOffset)
	}
	if e.Partitions > 1 {
		where, rng = e.Queue, fmt.Sprintf(" in %d partitions: %s", e.Partitions, rangeList(e.Ranges, e.Partitions))
	}
	fmt.Fprintf(w, "%s  %s  %s  %d messages in %d segments (%s)%s\n", e.ExecutedAt.Format(time.RFC3339),
		where, e.Rule, e.Messages, e.Segments, retentionBytes(e.Bytes), rng)
	for _, l := range e.Lost {
		if l.FromOffset != nil && l.ToOffset != nil {
			fmt.Fprintf(w, "    group %s lost %d unread (offsets %d..%d, %d of them leased)\n",
				l.Group, l.Messages, *l.FromOffset, *l.ToOffset, l.Leased)
			continue
		}
		fmt.Fprintf(w, "    group %s lost %d unread in %d partitions (%s; %d of them leased)\n",
			l.Group, l.Messages, l.Partitions, rangeList(l.Ranges, l.Partitions), l.Leased)
	}
}

// rangeList is "p0 0..11, p1 0..9", with how many of the partitions are
// not listed.
func rangeList(ranges []api.PartitionRange, partitions int) string {
	parts := make([]string, 0, len(ranges)+1)
	for _, r := range ranges {
		if r.FromOffset != nil && r.ToOffset != nil {
			parts = append(parts, fmt.Sprintf("%s %d..%d", r.Partition, *r.FromOffset, *r.ToOffset))
		} else {
			parts = append(parts, r.Partition)
		}
	}
	if more := partitions - len(ranges); more > 0 {
		parts = append(parts, fmt.Sprintf("%d more", more))
	}
	return strings.Join(parts, ", ")
}

package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"sort"

	"github.com/spf13/cobra"

	"github.com/lethe-mq/lethe/client"
	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/queuesfile"
)

type applyOptions struct {
	clientFlags
	file   string
	dryRun bool
}

func newApplyCmd() *cobra.Command {
	o := &applyOptions{}
	cmd := &cobra.Command{
		Use:   "apply FILE",
		Short: "Apply a queues file: show the plan, then configure each queue",
		Example: `  lethe apply queues.yaml --dry-run
  lethe apply queues.yaml`,
		Long: `Check a queues file (as lethe validate does), show the plan (each queue
to create, each option that changes from what the server has), then
configure the queues. A shorter retentionTier on a queue holding data is
not applied: the server keeps the old tier and the change waits for
lethe retention confirm QUEUE; apply prints what it would delete and move.
--dry-run shows the plan only.`,
		Args: oneArg("a queues file", "lethe apply queues.yaml"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.file = args[0]
			return o.Run(cmd.Context(), cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&o.dryRun, "dry-run", false, "show the plan, change nothing")
	addClientFlags(cmd, &o.clientFlags)
	return cmd
}

func (o *applyOptions) Run(ctx context.Context, w io.Writer) error {
	queues, err := readQueuesFile(o.file)
	if err != nil {
		return err
	}
	c, err := o.newClient()
	if err != nil {
		return err
	}
	var results []any
	for _, q := range queues {
		plan, err := o.plan(ctx, c, q)
		if err != nil {
			return o.explain(err)
		}
		if !o.json {
			fmt.Fprintln(w, plan)
		}
		if o.dryRun {
			continue
		}
		var resp api.ConfigureResponse
		if err := c.Do(ctx, http.MethodPost, "/api/v1/configure",
			api.ConfigureRequest{Queue: q.Name, Options: q.Options}, &resp); err != nil {
			return o.explain(fmt.Errorf("configure %s: %w", q.Name, err))
		}
		results = append(results, resp)
		if !o.json {
			printChange(w, resp.RetentionChange)
		}
	}
	if o.json {
		return printJSON(w, results)
	}
	return nil
}

// plan says what configuring q changes on the server.
func (o *applyOptions) plan(ctx context.Context, c *client.Client, q queuesfile.Queue) (string, error) {
	var cur api.Queue
	err := c.Do(ctx, http.MethodGet, "/api/v1/resources/queues/"+url.PathEscape(q.Name), nil, &cur)
	var apiErr *client.APIError
	if errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusNotFound {
		return fmt.Sprintf("%s: create with %s", q.Name, q.Options), nil
	}
	if err != nil {
		return "", err
	}
	var want, have map[string]any
	_ = json.Unmarshal(q.Options, &want)
	raw, _ := json.Marshal(cur.Options)
	_ = json.Unmarshal(raw, &have)
	var keys []string
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	line := q.Name + ":"
	changed := false
	for _, k := range keys {
		if !reflect.DeepEqual(normalize(want[k]), normalize(have[k])) {
			line += fmt.Sprintf(" %s %v -> %v;", k, have[k], want[k])
			changed = true
		}
	}
	if !changed {
		line += " unchanged"
	}
	return line, nil
}

// normalize makes a file value and a server value comparable (tier day
// spellings are the server's week ones).
func normalize(v any) any {
	switch v {
	case "7d":
		return "1w"
	case "21d":
		return "3w"
	case "49d":
		return "7w"
	}
	if s, ok := v.([]any); ok && len(s) == 0 {
		return nil
	}
	return v
}

// printChange says what a tier change does or waits for.
func printChange(w io.Writer, ch *api.RetentionChange) {
	if ch == nil {
		return
	}
	switch ch.State {
	case "awaiting_confirm":
		fmt.Fprintf(w, "  retentionTier %s -> %s WAITS FOR CONFIRMATION: it would delete %d messages (%s) and move %d (%d to the held area); run: lethe retention confirm %s\n",
			ch.From, ch.To, ch.Delete.Messages, humanBytes(ch.Delete.Bytes), ch.Move.Messages+ch.Hold.Messages, ch.Hold.Messages, ch.Queue)
	case "queued":
		fmt.Fprintf(w, "  retentionTier %s waits for the running change %s -> %s\n", ch.Next, ch.From, ch.To)
	default:
		fmt.Fprintf(w, "  retentionTier %s -> %s applied; %d messages move in the background (lethe retention shows progress)\n",
			ch.From, ch.To, ch.Move.Messages+ch.Hold.Messages)
	}
}

// humanBytes writes a byte count in KiB, MiB, GiB.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

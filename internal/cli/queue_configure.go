package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/lethe-mq/lethe/client/api"
)

// queueSetting ties a flag to the option it sets.
type queueSetting struct {
	flag, key, usage string
	boolean          bool
}

var queueSettings = []queueSetting{
	{"lease-time", "leaseTime", "seconds a popped message stays leased before it is delivered again", false},
	{"retry-limit", "retryLimit", "failures before a message goes to the dead letters", false},
	{"delayed-processing", "delayedProcessing", "seconds before a pushed message can be popped", false},
	{"window-buffer", "windowBuffer", "seconds a partition must be quiet before its messages can be popped", false},
	{"retention-enabled", "retentionEnabled", "delete old messages", true},
	{"retention-seconds", "retentionSeconds", "delete any message older than this", false},
	{"completed-retention-seconds", "completedRetentionSeconds", "delete consumed messages older than this", false},
	{"max-wait-time-seconds", "maxWaitTimeSeconds", "delete unconsumed messages older than this", false},
	{"dedup-window-seconds", "dedupWindowSeconds", "how long a transactionId is remembered for deduplication", false},
}

type queueConfigureOptions struct {
	*clientFlags
	queue string
	// set holds only the options the user gave, by JSON name, so the
	// others keep their current values.
	set map[string]any
}

func newQueueConfigureCmd(f *clientFlags) *cobra.Command {
	o := &queueConfigureOptions{clientFlags: f}
	ints := make([]int, len(queueSettings))
	bools := make([]bool, len(queueSettings))
	cmd := &cobra.Command{
		Use:   "configure QUEUE [--lease-time N ...]",
		Short: "Create a queue or change its options",
		Long: `Create QUEUE or change its options. Only the options you pass change;
the others keep their current values (Queen's defaults for a new queue).`,
		Example: `  lethe queue configure orders --lease-time 60 --retry-limit 5
  lethe queue configure orders --retention-enabled --completed-retention-seconds 3600`,
		Args:              oneArg("queue name", "lethe queue configure QUEUE [--lease-time N ...]"),
		ValidArgsFunction: f.completeQueue,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.queue = args[0]
			o.set = map[string]any{}
			for i, s := range queueSettings {
				if !cmd.Flags().Changed(s.flag) {
					continue
				}
				if s.boolean {
					o.set[s.key] = bools[i]
				} else {
					o.set[s.key] = ints[i]
				}
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context(), cmd.OutOrStdout())
		},
	}
	for i, s := range queueSettings {
		if s.boolean {
			cmd.Flags().BoolVar(&bools[i], s.flag, false, s.usage)
		} else {
			cmd.Flags().IntVar(&ints[i], s.flag, 0, s.usage)
		}
	}
	return cmd
}

func (o *queueConfigureOptions) Validate() error {
	for _, s := range queueSettings {
		if n, ok := o.set[s.key].(int); ok && n < 0 {
			return fmt.Errorf("--%s must be 0 or more, got %d", s.flag, n)
		}
	}
	return nil
}

func (o *queueConfigureOptions) Run(ctx context.Context, w io.Writer) error {
	c, err := o.newClient()
	if err != nil {
		return err
	}
	opts, err := json.Marshal(o.set)
	if err != nil {
		return err
	}
	resp, err := c.Configure(ctx, api.ConfigureRequest{Queue: o.queue, Options: opts})
	if err != nil {
		return o.explain(err)
	}
	if o.json {
		return printJSON(w, resp)
	}
	if len(o.set) == 0 {
		fmt.Fprintf(w, "queue %s is configured (no options changed)\n", o.queue)
	} else {
		fmt.Fprintf(w, "queue %s is configured (%d option%s changed)\n", o.queue, len(o.set), plural(len(o.set)))
	}
	return printQueueOptions(w, resp.Options)
}

// printQueueOptions lists the options the flags of configure set.
func printQueueOptions(w io.Writer, opts api.QueueOptions) error {
	var byKey map[string]any
	raw, _ := json.Marshal(opts)
	if err := json.Unmarshal(raw, &byKey); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, s := range queueSettings {
		fmt.Fprintf(tw, "  %s\t%v\n", s.flag, byKey[s.key])
	}
	return tw.Flush()
}

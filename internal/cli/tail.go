package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/lethe-mq/lethe/client/api"
)

// Bounds of tail's flags.
const (
	tailLinesDefault    = 10
	tailLinesMax        = 1000
	tailIntervalDefault = time.Second
	minTailInterval     = 100 * time.Millisecond
)

type tailOptions struct {
	clientFlags
	stderr    io.Writer // where gaps are told
	queue     string
	group     string
	partition string
	from      string
	follow    bool
	lines     int
	interval  time.Duration

	fromTime *time.Time // --from, parsed by Validate
	errOut   io.Writer  // warnings
	now      func() time.Time
}

func newTailCmd() *cobra.Command {
	o := &tailOptions{now: time.Now}
	cmd := &cobra.Command{
		Use:   "tail QUEUE [--group G] [--follow]",
		Short: "Print a queue's messages as they come",
		Long: `Print the messages of QUEUE, oldest first.

Without --group, tail only looks: it browses the stored messages (the last
--lines of them, or all since --from) and consumes nothing, so every
consumer group still receives them. It reads each payload by its
transaction id, which the server keeps for the queue's dedupWindowSeconds
(15 minutes at least); older payloads print as "(payload no longer
addressable)". With --follow it polls every --interval for new messages.

With --group, tail CONSUMES: it pops the messages as consumer group G and
acks each batch once printed, so G moves past them, as any consumer of G
would. --from then sets where a new group starts (see subscriptionFrom).

--json prints one message a line, as the pop API shapes it.`,
		Example: `  lethe tail orders
  lethe tail orders --follow
  lethe tail orders --partition customer-42 --from 1h
  lethe tail orders --group audit --follow --json | jq .data`,
		Args:              oneArg("queue name", "lethe tail QUEUE"),
		ValidArgsFunction: o.completeQueue,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.queue = args[0]
			o.errOut = cmd.ErrOrStderr()
			if cmd.Flags().Changed("lines") && o.group != "" {
				return errors.New("--lines only applies without --group: a consumer group prints what it has not consumed yet")
			}
			if err := o.Validate(); err != nil {
				return err
			}
			o.stderr = cmd.ErrOrStderr()
			return o.Run(cmd.Context(), cmd.OutOrStdout())
		},
	}
	addClientFlags(cmd, &o.clientFlags)
	f := cmd.Flags()
	f.StringVar(&o.group, "group", "", "consume as this consumer group (pops and acks: see above)")
	f.StringVar(&o.partition, "partition", "", "only this partition")
	f.StringVar(&o.from, "from", "", "start at this time: RFC 3339, a date, now, or how long ago (10m, 24h)")
	f.BoolVarP(&o.follow, "follow", "f", false, "keep printing new messages until interrupted")
	f.IntVarP(&o.lines, "lines", "n", tailLinesDefault, "without --group and --from, how many of the latest messages to print first")
	f.DurationVar(&o.interval, "interval", tailIntervalDefault, "without --group, how often --follow asks for new messages")
	return cmd
}

func (o *tailOptions) Validate() error {
	if o.lines < 0 || o.lines > tailLinesMax {
		return fmt.Errorf("--lines must be between 0 and %d, got %d", tailLinesMax, o.lines)
	}
	if o.interval < minTailInterval {
		return fmt.Errorf("--interval must be at least %s, got %s", minTailInterval, o.interval)
	}
	if o.from != "" {
		t, err := parseWhen("--from", o.from, o.now())
		if err != nil {
			return err
		}
		o.fromTime = &t
	}
	return nil
}

func (o *tailOptions) Run(ctx context.Context, w io.Writer) error {
	c, err := o.newClient()
	if err != nil {
		return err
	}
	if o.group != "" {
		err = o.consume(ctx, c, w)
	} else {
		err = o.browse(ctx, c, w)
	}
	if o.follow && errors.Is(err, context.Canceled) {
		return nil // interrupted: the normal end of --follow
	}
	return o.explain(err)
}

// printMessage prints one message: a line for people, or the message as
// JSON on one line.
func (o *tailOptions) printMessage(w io.Writer, m api.Message) error {
	if o.json {
		raw, err := json.Marshal(m)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", raw)
		return err
	}
	at := m.CreatedAt
	if t, err := time.Parse(time.RFC3339Nano, m.CreatedAt); err == nil {
		at = stamp(t)
	}
	data := string(m.Data)
	if m.Data == nil {
		data = "(payload no longer addressable)"
	}
	_, err := fmt.Fprintf(w, "%s  %s/%s #%d  %s  %s\n", at, m.Queue, m.Partition, m.Offset, m.TransactionID, data)
	return err
}

package cli

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/lethe-mq/lethe/client"
	"github.com/lethe-mq/lethe/client/api"
)

// dlqPage is the server's largest page of dead letters.
const dlqPage = 1000

func newDLQCmd() *cobra.Command {
	f := &clientFlags{}
	cmd := &cobra.Command{
		Use:   "dlq",
		Short: "List, show, replay and delete dead letters",
		Long: `Dead letters are messages a consumer group gave up on: acked with status
dlq, or failed more than the queue's retryLimit. Replaying one appends its
payload to its partition again under a new transaction id (every group
reading the partition receives it) and removes the dead letter. Deleting
one needs the operator token when auth is on.`,
		Example: `  lethe dlq list --queue orders
  lethe dlq show 42
  lethe dlq replay 42 43
  lethe dlq replay --all --queue orders --yes
  lethe dlq delete --all --queue orders --group billing`,
	}
	addClientFlags(cmd, f)
	cmd.AddCommand(newDLQListCmd(f), newDLQShowCmd(f), newDLQReplayCmd(f), newDLQDeleteCmd(f))
	return cmd
}

// dlqFilter narrows the dead letters a command looks at.
type dlqFilter struct {
	queue, group, partition string
	from, to                string
}

func (f *dlqFilter) addFlags(cmd *cobra.Command, flags *clientFlags) {
	fl := cmd.Flags()
	fl.StringVar(&f.queue, "queue", "", "only dead letters of this queue")
	fl.StringVar(&f.group, "group", "", "only those this consumer group gave up on")
	fl.StringVar(&f.partition, "partition", "", "only those of this partition (with --queue)")
	fl.StringVar(&f.from, "from", "", "only those that failed at or after this time (RFC 3339, a date, or how long ago: 24h)")
	fl.StringVar(&f.to, "to", "", "only those that failed at or before this time")
	_ = cmd.RegisterFlagCompletionFunc("queue", flags.completeQueueFlag)
}

// query builds the list's query string; times are read like --from
// everywhere (a duration is that long ago).
func (f *dlqFilter) query(now time.Time) (url.Values, error) {
	q := url.Values{}
	for key, v := range map[string]string{"queue": f.queue, "consumerGroup": f.group, "partition": f.partition} {
		if v != "" {
			q.Set(key, v)
		}
	}
	for key, v := range map[string]string{"from": f.from, "to": f.to} {
		if v == "" {
			continue
		}
		t, err := parseWhen("--"+key, v, now)
		if err != nil {
			return nil, err
		}
		q.Set(key, t.UTC().Format(time.RFC3339Nano))
	}
	return q, nil
}

// listDeadLetters reads one page, the most recently failed first.
func listDeadLetters(ctx context.Context, c *client.Client, q url.Values, limit, offset int) (*api.DeadLetterList, error) {
	q.Set("limit", strconv.Itoa(limit))
	q.Set("offset", strconv.Itoa(offset))
	var page api.DeadLetterList
	if err := c.Do(ctx, http.MethodGet, "/api/v1/dlq?"+q.Encode(), nil, &page); err != nil {
		return nil, err
	}
	return &page, nil
}

// eachDeadLetter pages through every dead letter the query matches, most
// recently failed first, until visit returns false.
func eachDeadLetter(ctx context.Context, c *client.Client, q url.Values, visit func(api.DeadLetter) bool) error {
	for offset := 0; ; {
		page, err := listDeadLetters(ctx, c, q, dlqPage, offset)
		if err != nil {
			return err
		}
		for _, d := range page.Messages {
			if !visit(d) {
				return nil
			}
		}
		// A page cut short by the server's byte bound says Truncated: the
		// next one starts after what it held.
		offset += len(page.Messages)
		if len(page.Messages) == 0 || (len(page.Messages) < dlqPage && !page.Truncated) {
			return nil
		}
	}
}

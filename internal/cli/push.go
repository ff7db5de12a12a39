package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/lethe-mq/lethe/client"
	"github.com/lethe-mq/lethe/client/api"
)

// pushChunk is how many messages one push request carries.
const pushChunk = 1000

// pushListMax is the most messages listed one per line; past it only the
// summary is printed.
const pushListMax = 100

type pushOptions struct {
	clientFlags
	queue     string
	partition string
	txn       string
	data      string
	file      string
	in        io.Reader // stdin, when neither --data nor --file is given
	errOut    io.Writer // progress of pushes of more than one request
}

func newPushCmd() *cobra.Command {
	o := &pushOptions{}
	cmd := &cobra.Command{
		Use:   "push QUEUE [--data JSON | --file F | < lines]",
		Short: "Push messages to a queue",
		Long: `Push messages to QUEUE on a running lethe.

The message is --data, or the contents of --file, or stdin. A file or stdin
holding one JSON document is one message; otherwise each non-empty line must
be a JSON document and is one message.`,
		Example: `  lethe push orders --data '{"id": 1}'
  lethe push orders --partition eu --txn order-1 --data '{"id": 1}'
  cat orders.jsonl | lethe push orders`,
		Args:              oneArg("queue name", "lethe push QUEUE"),
		ValidArgsFunction: o.completeQueue,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.queue = args[0]
			o.in = cmd.InOrStdin()
			o.errOut = cmd.ErrOrStderr()
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context(), cmd.OutOrStdout())
		},
	}
	addClientFlags(cmd, &o.clientFlags)
	f := cmd.Flags()
	f.StringVar(&o.partition, "partition", "", "partition to push to (default \"Default\")")
	f.StringVar(&o.txn, "txn", "", "transaction id, for deduplication (one message only)")
	f.StringVar(&o.data, "data", "", "the message, as JSON")
	f.StringVarP(&o.file, "file", "f", "", "read messages from this file")
	return cmd
}

func (o *pushOptions) Validate() error {
	if o.data != "" && o.file != "" {
		return errors.New("give the message with --data or --file, not both")
	}
	if o.data != "" && !json.Valid([]byte(o.data)) {
		return fmt.Errorf("--data is not valid JSON: %q (quote strings: --data '\"text\"')", o.data)
	}
	return nil
}

func (o *pushOptions) Run(ctx context.Context, w io.Writer) error {
	payloads, err := o.payloads()
	if err != nil {
		return err
	}
	if o.txn != "" && len(payloads) != 1 {
		return fmt.Errorf("--txn names one message, but %d were given", len(payloads))
	}
	c, err := o.newClient()
	if err != nil {
		return err
	}
	results, err := o.pushAll(ctx, c, payloads)
	if err != nil {
		return err
	}
	if o.json {
		if err := printJSON(w, results); err != nil {
			return err
		}
	} else if err := printPushResults(w, o.queue, results); err != nil {
		return err
	}
	return pushFailures(results)
}

// pushAll pushes payloads pushChunk at a time, showing progress when it
// takes more than one request.
func (o *pushOptions) pushAll(ctx context.Context, c *client.Client, payloads []json.RawMessage) ([]api.PushResult, error) {
	var bar *progress
	if len(payloads) > pushChunk && o.errOut != nil {
		bar = newProgress(o.errOut, "pushing to "+o.queue, len(payloads))
		defer bar.Finish()
	}
	results := make([]api.PushResult, 0, len(payloads))
	for start := 0; start < len(payloads); start += pushChunk {
		chunk := payloads[start:min(start+pushChunk, len(payloads))]
		items := make([]api.PushItem, len(chunk))
		for i, p := range chunk {
			items[i] = api.PushItem{Queue: o.queue, Partition: o.partition, Payload: p, TransactionID: o.txn}
		}
		res, err := c.Push(ctx, items...)
		if err != nil {
			if start > 0 {
				err = fmt.Errorf("%w (the first %d messages were pushed)", err, start)
			}
			return nil, o.explain(err)
		}
		for i := range res {
			res[i].Index += start
		}
		results = append(results, res...)
		if bar != nil {
			bar.Add(len(chunk))
		}
	}
	return results, nil
}

// payloads reads the messages from --data, --file or stdin.
func (o *pushOptions) payloads() ([]json.RawMessage, error) {
	if o.data != "" {
		return []json.RawMessage{json.RawMessage(o.data)}, nil
	}
	source, r := "stdin", o.in
	if o.file != "" {
		f, err := os.Open(o.file)
		if err != nil {
			return nil, fmt.Errorf("--file: %w", err)
		}
		defer f.Close()
		source, r = o.file, f
	} else if isTerminal(r) {
		return nil, errors.New("no message given: pass --data JSON or --file F, or pipe JSON lines to stdin")
	}
	raw, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", source, err)
	}
	return parsePayloads(raw, source)
}

// parsePayloads reads one JSON document, or one per non-empty line.
func parsePayloads(raw []byte, source string) ([]json.RawMessage, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 {
		return nil, fmt.Errorf("%s holds no message: give one JSON document, or one per line", source)
	}
	if json.Valid(trimmed) {
		return []json.RawMessage{json.RawMessage(trimmed)}, nil
	}
	var out []json.RawMessage
	for n, line := range bytes.Split(raw, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if !json.Valid(line) {
			return nil, fmt.Errorf("%s line %d is not valid JSON: %.80q (one JSON document per line)", source, n+1, line)
		}
		out = append(out, json.RawMessage(line))
	}
	return out, nil
}

func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func printPushResults(w io.Writer, queue string, results []api.PushResult) error {
	counts := map[string]int{}
	for _, r := range results {
		counts[r.Status]++
	}
	if len(results) <= pushListMax {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "STATUS\tTRANSACTION-ID\tMESSAGE-ID\tPARTITION-ID")
		for _, r := range results {
			status := r.Status
			if r.Error != "" {
				status += ": " + r.Error
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", status, r.TransactionID, r.MessageID, r.PartitionID)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	summary := fmt.Sprintf("pushed %d message%s to %s:", len(results), plural(len(results)), queue)
	for _, s := range []string{api.StatusQueued, api.StatusDuplicate, api.StatusBuffered, api.StatusFailed} {
		if counts[s] > 0 {
			summary += fmt.Sprintf(" %d %s", counts[s], s)
		}
	}
	_, err := fmt.Fprintln(w, summary)
	return err
}

func pushFailures(results []api.PushResult) error {
	var failed int
	var first string
	for _, r := range results {
		if r.Status == api.StatusFailed {
			if failed == 0 {
				first = r.Error
			}
			failed++
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d messages were not pushed; the first failed with: %s", failed, len(results), first)
	}
	return nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

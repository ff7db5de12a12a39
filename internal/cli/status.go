package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lethe-mq/lethe/client"
)

func init() { extraCommands = append(extraCommands, newStatusCmd) }

type statusOptions struct {
	clientFlags
}

func newStatusCmd() *cobra.Command {
	o := &statusOptions{}
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show a running lethe's status",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context(), cmd.OutOrStdout())
		},
	}
	addClientFlags(cmd, &o.clientFlags)
	return cmd
}

func (o *statusOptions) Validate() error { return nil }

// basicStatus is what status shows of a server without /api/v1/status.
type basicStatus struct {
	Health *client.Health `json:"health"`
	Queues []client.Queue `json:"queues"`
}

func (o *statusOptions) Run(ctx context.Context, w io.Writer) error {
	c, err := o.newClient()
	if err != nil {
		return err
	}
	var status map[string]any
	err = c.Do(ctx, http.MethodGet, "/api/v1/status", nil, &status)
	if client.IsNotFound(err) {
		return o.runBasic(ctx, c, w)
	}
	if err != nil {
		return o.explain(err)
	}
	if o.json {
		return printJSON(w, status)
	}
	fmt.Fprintf(w, "lethe at %s\n", o.server)
	return printFlat(w, "", status)
}

// runBasic shows health and queues, for servers without /api/v1/status.
func (o *statusOptions) runBasic(ctx context.Context, c *client.Client, w io.Writer) error {
	h, err := c.Health(ctx)
	if err != nil {
		return o.explain(err)
	}
	qs, err := c.ListQueues(ctx, client.ListQueuesOptions{})
	if err != nil {
		return o.explain(err)
	}
	if o.json {
		return printJSON(w, basicStatus{Health: h, Queues: qs})
	}
	fmt.Fprintf(w, "lethe at %s: %s, database %s", o.server, h.Status, h.Database)
	if h.UptimeSeconds > 0 {
		fmt.Fprintf(w, ", up %ds", h.UptimeSeconds)
	}
	var messages int64
	for _, q := range qs {
		messages += q.Messages
	}
	fmt.Fprintf(w, "\n%d queue%s, %d message%s\n", len(qs), plural(len(qs)), messages, plural(int(messages)))
	if len(qs) == 0 {
		return nil
	}
	return printQueueTable(w, qs)
}

// printFlat prints any decoded JSON as sorted "path: value" lines, so the
// status of any server version reads well without knowing its shape.
func printFlat(w io.Writer, prefix string, v any) error {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if err := printFlat(w, joinPath(prefix, k), v[k]); err != nil {
				return err
			}
		}
		return nil
	case []any:
		if len(v) == 0 {
			_, err := fmt.Fprintf(w, "%s: []\n", prefix)
			return err
		}
		for i, e := range v {
			if err := printFlat(w, fmt.Sprintf("%s[%d]", prefix, i), e); err != nil {
				return err
			}
		}
		return nil
	case nil:
		_, err := fmt.Fprintf(w, "%s: null\n", prefix)
		return err
	case string:
		_, err := fmt.Fprintf(w, "%s: %s\n", prefix, v)
		return err
	default:
		b, _ := json.Marshal(v)
		_, err := fmt.Fprintf(w, "%s: %s\n", prefix, strings.TrimSpace(string(b)))
		return err
	}
}

func joinPath(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

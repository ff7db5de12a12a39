package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/lethe-mq/lethe/client"
	"github.com/lethe-mq/lethe/client/api"
)

// dlqAction is replay or delete: what differs between the two.
type dlqAction struct {
	verb, done string // "replay", "replayed"
	operator   bool   // needs the operator token
	// alwaysConfirm asks before acting on ids named one by one too, not
	// only before --all.
	alwaysConfirm bool
	call          func(ctx context.Context, c *client.Client, id string) (*api.DeadLetterReplayed, error)
}

var (
	dlqReplay = dlqAction{verb: "replay", done: "replayed", call: func(ctx context.Context, c *client.Client, id string) (*api.DeadLetterReplayed, error) {
		var res api.DeadLetterReplayed
		err := c.Do(ctx, http.MethodPost, "/api/v1/dlq/"+url.PathEscape(id)+"/replay", nil, &res)
		return &res, err
	}}
	dlqDelete = dlqAction{verb: "delete", done: "deleted", operator: true, alwaysConfirm: true,
		call: func(ctx context.Context, c *client.Client, id string) (*api.DeadLetterReplayed, error) {
			return nil, c.Do(ctx, http.MethodDelete, "/api/v1/dlq/"+url.PathEscape(id), nil, &api.DeadLetterDeleted{})
		}}
)

// dlqOutcome is what happened to one dead letter, for --json.
type dlqOutcome struct {
	ID string `json:"id"`
	// Outcome is replayed, deleted, or gone (it no longer existed).
	Outcome  string                  `json:"outcome"`
	Replayed *api.DeadLetterReplayed `json:"replayed,omitempty"`
}

type dlqActOptions struct {
	*clientFlags
	action dlqAction
	ids    []string
	all    bool
	yes    bool
	filter dlqFilter
	in     io.Reader
	errOut io.Writer
}

func newDLQReplayCmd(f *clientFlags) *cobra.Command {
	return newDLQActCmd(f, dlqReplay, "Replay dead letters: push their payloads again and remove them",
		`  lethe dlq replay 42
  lethe dlq replay 42 43 44
  lethe dlq replay --all --queue orders --group billing --yes`)
}

func newDLQDeleteCmd(f *clientFlags) *cobra.Command {
	return newDLQActCmd(f, dlqDelete, "Delete dead letters for good (needs the operator token when auth is on)",
		`  lethe dlq delete 42
  lethe dlq delete --all --queue orders --from 30d --yes`)
}

func newDLQActCmd(f *clientFlags, action dlqAction, short, example string) *cobra.Command {
	o := &dlqActOptions{clientFlags: f, action: action}
	confirmWhen := "with --all"
	if action.alwaysConfirm {
		confirmWhen = "always"
	}
	cmd := &cobra.Command{
		Use:   action.verb + " ID... | --all --queue Q",
		Short: short,
		Long: short + `.

Name the dead letters by id (see ` + "`lethe dlq list`" + `), or take every one that
--queue and the other filters select with --all. It asks before it starts
(` + confirmWhen + `) unless --yes; a dead letter already gone is skipped.`,
		Example: example,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.ids, o.in, o.errOut = args, cmd.InOrStdin(), cmd.ErrOrStderr()
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context(), cmd.OutOrStdout())
		},
	}
	o.filter.addFlags(cmd, f)
	cmd.Flags().BoolVar(&o.all, "all", false, "every dead letter of --queue that the filters select")
	cmd.Flags().BoolVarP(&o.yes, "yes", "y", false, "do not ask for confirmation")
	return cmd
}

func (o *dlqActOptions) Validate() error {
	switch {
	case o.all && len(o.ids) > 0:
		return fmt.Errorf("give dead letter ids or --all, not both")
	case o.all && o.filter.queue == "":
		return fmt.Errorf("--all needs --queue: %s the dead letters of one queue at a time", o.action.verb)
	case !o.all && len(o.ids) == 0:
		return fmt.Errorf("missing dead letter ids: usage: lethe dlq %s ID... | --all --queue Q", o.action.verb)
	case !o.all && (o.filter != dlqFilter{}):
		return fmt.Errorf("--queue, --group, --partition, --from and --to select dead letters for --all; with ids, leave them out")
	}
	return validateDeadLetterIDs(o.ids)
}

// validateDeadLetterIDs checks ids before anything is sent.
func validateDeadLetterIDs(ids []string) error {
	for _, id := range ids {
		if n, err := strconv.ParseInt(id, 10, 64); err != nil || n < 1 {
			return fmt.Errorf("dead letter id must be a positive whole number (the ID column of `lethe dlq list`), got %q", id)
		}
	}
	return nil
}

func (o *dlqActOptions) Run(ctx context.Context, w io.Writer) error {
	newClient := o.newClient
	if o.action.operator {
		newClient = o.newOperatorClient
	}
	c, err := newClient()
	if err != nil {
		return err
	}
	ids, err := o.targets(ctx, c)
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		_, err := fmt.Fprintln(w, "no dead letters match: nothing to "+o.action.verb)
		return err
	}
	if (o.all || o.action.alwaysConfirm) && !o.yes &&
		!confirm(o.in, o.errOut, fmt.Sprintf("%s %d dead letter%s%s?", o.action.verb, len(ids), plural(len(ids)), o.scope())) {
		return fmt.Errorf("did not %s the %d dead letter%s: answer y, or add --yes", o.action.verb, len(ids), plural(len(ids)))
	}
	outcomes, err := o.apply(ctx, c, ids)
	if o.json {
		if perr := printJSON(w, outcomes); perr != nil {
			return perr
		}
	} else {
		o.printOutcomes(w, outcomes)
	}
	return err
}

// targets are the ids to act on: those given, or every dead letter the
// filter selects, oldest failure first so replays keep their order.
func (o *dlqActOptions) targets(ctx context.Context, c *client.Client) ([]string, error) {
	if !o.all {
		return o.ids, nil
	}
	q, err := o.filter.query(time.Now())
	if err != nil {
		return nil, err
	}
	var ids []string
	if err := eachDeadLetter(ctx, c, q, func(d api.DeadLetter) bool {
		ids = append(ids, d.ID)
		return true
	}); err != nil {
		return nil, o.explain(err)
	}
	slices.Reverse(ids)
	return ids, nil
}

func (o *dlqActOptions) scope() string {
	if !o.all {
		return ""
	}
	s := " of queue " + o.filter.queue
	if o.filter.group != "" {
		s += ", group " + o.filter.group
	}
	if o.filter.partition != "" {
		s += ", partition " + o.filter.partition
	}
	return s
}

// apply acts on each id in turn, with a progress bar for more than one. It
// stops at the first failure other than "already gone".
func (o *dlqActOptions) apply(ctx context.Context, c *client.Client, ids []string) ([]dlqOutcome, error) {
	var bar *progress
	if len(ids) > 1 {
		bar = newProgress(o.errOut, o.action.verb, len(ids))
		defer bar.Finish()
	}
	outcomes := make([]dlqOutcome, 0, len(ids))
	for i, id := range ids {
		res, err := o.action.call(ctx, c, id)
		switch {
		case client.IsNotFound(err):
			outcomes = append(outcomes, dlqOutcome{ID: id, Outcome: "gone"})
		case err != nil:
			return outcomes, fmt.Errorf("%s %d of %d dead letters, then dead letter %s failed: %w",
				o.action.done, i, len(ids), id, o.explain(err))
		default:
			outcomes = append(outcomes, dlqOutcome{ID: id, Outcome: o.action.done, Replayed: res})
		}
		if bar != nil {
			bar.Add(1)
		}
	}
	return outcomes, ctx.Err()
}

func (o *dlqActOptions) printOutcomes(w io.Writer, outcomes []dlqOutcome) {
	gone := 0
	for _, r := range outcomes {
		switch {
		case r.Outcome == "gone":
			gone++
			if !o.all {
				fmt.Fprintf(w, "dead letter %s is already gone\n", r.ID)
			}
		case o.all:
		case r.Replayed != nil:
			fmt.Fprintf(w, "replayed dead letter %s to %s/%s at offset %d as transaction %s\n",
				r.ID, r.Replayed.Queue, r.Replayed.Partition, r.Replayed.Offset, r.Replayed.TransactionID)
		default:
			fmt.Fprintf(w, "deleted dead letter %s\n", r.ID)
		}
	}
	n := len(outcomes) - gone
	line := fmt.Sprintf("%s %d dead letter%s%s", o.action.done, n, plural(n), o.scope())
	if gone > 0 {
		line += fmt.Sprintf(" (%d already gone)", gone)
	}
	fmt.Fprintln(w, line)
}

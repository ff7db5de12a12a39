package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/lethe-mq/lethe/internal/queuesfile"
)

type validateOptions struct {
	file string
}

func newValidateCmd() *cobra.Command {
	o := &validateOptions{}
	return &cobra.Command{
		Use:     "validate FILE",
		Short:   "Check a queues file offline: every error with its line and the allowed values",
		Example: `  lethe validate queues.yaml`,
		Long: `Check a declarative queues file (YAML) without a server:

  queues:
    orders:
      retentionTier: 1w        # 1w, 3w, 7w (or 7d, 21d, 49d) or forever
      quarantined: keep        # keep or purge
      requiredGroups: [billing]
      leaseTime: 60

Every problem is printed as FILE:LINE: message; the exit status is non-zero
when there is one. lethe apply FILE applies a valid file.`,
		Args: oneArg("a queues file", "lethe validate queues.yaml"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.file = args[0]
			return o.Run(cmd.Context(), cmd.OutOrStdout())
		},
	}
}

func (o *validateOptions) Run(_ context.Context, w io.Writer) error {
	queues, err := readQueuesFile(o.file)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s: %d queues, no problem\n", o.file, len(queues))
	return nil
}

// readQueuesFile reads and checks a queues file; its problems come back
// as one error, a line each, FILE:LINE: message.
func readQueuesFile(path string) ([]queuesfile.Queue, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the queues file: %w", err)
	}
	queues, err := queuesfile.Parse(data)
	var ps queuesfile.Problems
	if errors.As(err, &ps) {
		msg := ""
		for i, p := range ps {
			if i > 0 {
				msg += "\n"
			}
			msg += fmt.Sprintf("%s:%d: %s", path, p.Line, p.Msg)
		}
		return nil, fmt.Errorf("%s\n%d problems; nothing was applied", msg, len(ps))
	}
	return queues, err
}

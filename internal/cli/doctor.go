package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lethe-mq/lethe/client/api"
)

type doctorOptions struct {
	clientFlags
}

func newDoctorCmd() *cobra.Command {
	o := &doctorOptions{}
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check a deployment against the checkpoints of trustworthy retention",
		Long: `Check the database a running lethe serves: the retention loop runs and
records its cycles, no cycle failed lately, every retention predicate has a
valid index, autovacuum keeps up, the retention records age out themselves,
and nothing of lethe's is granted to PUBLIC. Each check says what it found
and, when it is not ok, what to do. Exits 1 when a check fails.`,
		Example: `  lethe doctor
  lethe doctor --server http://lethe.internal:6632 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.Run(cmd.Context(), cmd.OutOrStdout())
		},
	}
	addClientFlags(cmd, &o.clientFlags)
	return cmd
}

func (o *doctorOptions) Run(ctx context.Context, w io.Writer) error {
	c, err := o.newClient()
	if err != nil {
		return err
	}
	var rep api.DoctorReport
	if err := c.Do(ctx, http.MethodGet, "/api/v1/doctor", nil, &rep); err != nil {
		return o.explain(err)
	}
	if o.json {
		err = printJSON(w, rep)
	} else {
		err = printDoctor(w, rep)
	}
	if err != nil {
		return err
	}
	var failed []string
	for _, ch := range rep.Checks {
		if ch.Status == api.DoctorFail {
			failed = append(failed, ch.ID)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d check%s failed: %s", len(failed), plural(len(failed)), strings.Join(failed, ", "))
	}
	return nil
}

// printDoctor shows each check as a status, its id and what it checks,
// then what it found and, when not ok, the fix.
func printDoctor(w io.Writer, rep api.DoctorReport) error {
	for _, ch := range rep.Checks {
		fmt.Fprintf(w, "%-4s  %s: %s\n", strings.ToUpper(ch.Status), ch.ID, ch.Checkpoint)
		fmt.Fprintf(w, "      %s\n", ch.Detail)
		if ch.Fix != "" {
			fmt.Fprintf(w, "      fix: %s\n", ch.Fix)
		}
	}
	_, err := fmt.Fprintf(w, "overall: %s\n", rep.Status)
	return err
}

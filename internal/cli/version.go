package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/lethe-mq/lethe/internal/version"
)

type versionOptions struct {
	json bool
}

func newVersionCmd() *cobra.Command {
	o := &versionOptions{}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print lethe's version",
		Long: `Print the version this binary was built as: the one deploy/build.sh
stamped in, else the newest release of CHANGELOG.md; then the VCS revision
it was built from when known, and the Go version:

  lethe 0.1.0 (revision 0123456789ab, go1.26.0)`,
		Example: `  lethe version
  lethe --version
  lethe version --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.Run(cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print JSON for scripts")
	return cmd
}

func (o *versionOptions) Run(w io.Writer) error {
	info := version.Get()
	if o.json {
		return printJSON(w, info)
	}
	_, err := fmt.Fprintf(w, "lethe %s\n", info.Long())
	return err
}

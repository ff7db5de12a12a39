package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/lethe-mq/lethe/internal/version"
)

func init() { extraCommands = append(extraCommands, newVersionCmd) }

type versionOptions struct {
	json bool
}

func newVersionCmd() *cobra.Command {
	o := &versionOptions{}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print lethe's version",
		Long: `Print the version this binary was built as (set at build time, see
deploy/build.sh), the VCS revision it was built from when known, and the Go
version.`,
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
	_, err := fmt.Fprintf(w, "lethe %s, %s\n", info, info.GoVersion)
	return err
}

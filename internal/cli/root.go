// Package cli holds lethe's commands, one file per command. Each has an
// options struct, a Validate and a Run writing to an injected io.Writer;
// only main exits the process.
package cli

import (
	"io"

	"github.com/spf13/cobra"
)

// NewRoot builds the lethe command tree.
func NewRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "lethe",
		Short:         "lethe: a partitioned message log on PostgreSQL that speaks Queen MQ's HTTP API",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(newServeCmd())
	for _, add := range extraCommands {
		root.AddCommand(add())
	}
	return root
}

// extraCommands lets command files register themselves without editing root.go.
var extraCommands []func() *cobra.Command

// Package cli holds lethe's commands, one file per command. Each has an
// options struct, a Validate and a Run writing to an injected io.Writer;
// only main exits the process.
package cli

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/lethe-mq/lethe/internal/version"
)

// NewRoot builds the lethe command tree.
func NewRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "lethe",
		Short: "lethe: a partitioned message log on PostgreSQL that speaks Queen MQ's HTTP API",
		Long: `lethe: a partitioned message log on PostgreSQL that speaks Queen MQ's HTTP API.

` + "`lethe serve`" + ` runs a replica; the other commands talk to one over HTTP, at
--server, $LETHE_URL, the current context of ~/.config/lethe/config.yaml
(see ` + "`lethe context`" + `) or ` + DefaultServerURL + `, in that order.`,
		Example: `  lethe serve
  lethe push orders --data '{"id": 1}'
  lethe tail orders --follow
  lethe lag`,
		Version:       version.String(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate("lethe {{.Version}}\n")
	root.CompletionOptions.DisableDefaultCmd = true // ours has examples
	root.SetOut(stdout)
	root.SetErr(stderr)
	// The whole tree, in one place: each command file exposes its
	// constructor, and nothing registers itself (a test refuses init()).
	root.AddCommand(
		withExample(newServeCmd(), `  lethe serve
  DATABASE_URL=postgres://lethe@db/lethe lethe serve --port 8080`),
		newAckCmd(),
		newApplyCmd(),
		newCompletionCmd(),
		newContextCmd(),
		newDLQCmd(),
		newDoctorCmd(),
		newLagCmd(),
		newPopCmd(),
		newPushCmd(),
		newQueueCmd(),
		newRetentionCmd(),
		newStatusCmd(),
		newTailCmd(),
		newValidateCmd(),
		newVersionCmd(),
	)
	return root
}

// withExample gives a command defined elsewhere an example when it has
// none, so every command's help shows one.
func withExample(cmd *cobra.Command, example string) *cobra.Command {
	if cmd.Example == "" {
		cmd.Example = example
	}
	return cmd
}

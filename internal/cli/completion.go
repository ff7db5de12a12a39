package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lethe-mq/lethe/client"
	"github.com/lethe-mq/lethe/internal/cli/cliconfig"
)

// completionTimeout bounds the call for queue names: a shell waiting on
// a tab must not hang on an unreachable server.
const completionTimeout = 2 * time.Second

func newCompletionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh|fish|powershell",
		Short: "Print the shell completion script",
		Long: `Print a script that makes your shell complete lethe's commands, flags,
context names and (from the running server) queue names.`,
		Example: `  # bash, for this shell; add the line to ~/.bashrc to keep it
  source <(lethe completion bash)
  # zsh
  lethe completion zsh > "${fpath[1]}/_lethe"
  # fish
  lethe completion fish > ~/.config/fish/completions/lethe.fish`,
		ValidArgs: []string{"bash", "zsh", "fish", "powershell"},
		Args:      oneArg("shell", "lethe completion bash|zsh|fish|powershell"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return writeCompletion(cmd.Root(), cmd.OutOrStdout(), args[0])
		},
	}
}

func writeCompletion(root *cobra.Command, w io.Writer, shell string) error {
	switch shell {
	case "bash":
		return root.GenBashCompletionV2(w, true)
	case "zsh":
		return root.GenZshCompletion(w)
	case "fish":
		return root.GenFishCompletion(w, true)
	case "powershell":
		return root.GenPowerShellCompletionWithDesc(w)
	}
	return fmt.Errorf("no completion for shell %q: choose bash, zsh, fish or powershell", shell)
}

// completeQueue completes the first argument with the queue names of the
// server the flags point at, and quietly offers nothing when it cannot be
// reached.
func (f *clientFlags) completeQueue(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return f.queueNames(cmd.Context(), toComplete), cobra.ShellCompDirectiveNoFileComp
}

// completeQueueFlag completes a --queue flag.
func (f *clientFlags) completeQueueFlag(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	return f.queueNames(cmd.Context(), toComplete), cobra.ShellCompDirectiveNoFileComp
}

func (f *clientFlags) queueNames(ctx context.Context, prefix string) []string {
	if ctx == nil {
		ctx = context.Background()
	}
	c, err := f.newClient()
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, completionTimeout)
	defer cancel()
	qs, err := c.ListQueues(ctx, client.ListQueuesOptions{})
	if err != nil {
		return nil
	}
	var out []string
	for _, q := range qs {
		if strings.HasPrefix(q.Name, prefix) {
			out = append(out, q.Name)
		}
	}
	return out
}

// completeContexts completes context names from the config file.
func completeContexts(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	path, err := cliconfig.Path(os.Getenv)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	file, err := cliconfig.Load(path)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	for _, n := range file.Names() {
		if strings.HasPrefix(n, toComplete) {
			out = append(out, n)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

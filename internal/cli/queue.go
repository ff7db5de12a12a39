package cli

import (
	"github.com/spf13/cobra"
)

func init() { extraCommands = append(extraCommands, newQueueCmd) }

func newQueueCmd() *cobra.Command {
	f := &clientFlags{}
	cmd := &cobra.Command{
		Use:   "queue",
		Short: "List, show, configure and delete queues",
	}
	addClientFlags(cmd, f)
	cmd.AddCommand(newQueueConfigureCmd(f), newQueueListCmd(f), newQueueShowCmd(f), newQueueDeleteCmd(f))
	return cmd
}

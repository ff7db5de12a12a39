package cli

import (
	"github.com/spf13/cobra"
)

func newQueueCmd() *cobra.Command {
	f := &clientFlags{}
	cmd := &cobra.Command{
		Use:   "queue",
		Short: "List, show, configure and delete queues",
		Example: `  lethe queue list
  lethe queue show orders
  lethe queue configure orders --lease-time 60
  lethe queue delete orders --yes`,
	}
	addClientFlags(cmd, f)
	cmd.AddCommand(newQueueConfigureCmd(f), newQueueListCmd(f), newQueueShowCmd(f), newQueueDeleteCmd(f))
	return cmd
}

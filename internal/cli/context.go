package cli

import (
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/lethe-mq/lethe/internal/cli/cliconfig"
)

func newContextCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "context",
		Short: "Manage named servers (URL and tokens) in the config file",
		Long: `A context is a named lethe server with its tokens, kept in
$XDG_CONFIG_HOME/lethe/config.yaml (~/.config/lethe/config.yaml), readable
by you only. Commands use the current context, or the one --context or
$LETHE_CONTEXT names. --server and --token win over a context, and
$LETHE_URL and $LETHE_TOKEN win over the current context (but not over one
named with --context).`,
		Example: `  lethe context set prod --server https://lethe.example.com --token "$TOKEN" --operator-token "$OP_TOKEN"
  lethe context use prod
  lethe context list
  lethe lag --context staging`,
	}
	cmd.AddCommand(newContextListCmd(), newContextUseCmd(), newContextSetCmd(), newContextDeleteCmd())
	return cmd
}

// contextFile loads the config file and says where it is.
func contextFile() (*cliconfig.File, string, error) {
	path, err := cliconfig.Path(os.Getenv)
	if err != nil {
		return nil, "", err
	}
	f, err := cliconfig.Load(path)
	return f, path, err
}

type contextListOptions struct{ json bool }

func newContextListCmd() *cobra.Command {
	o := &contextListOptions{}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the contexts; * marks the current one",
		Example: `  lethe context list
  lethe context list --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.Run(cmd.OutOrStdout()) },
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print JSON for scripts (tokens are shown as set or not)")
	return cmd
}

// contextView is a context as list shows it: never the tokens themselves.
type contextView struct {
	Name          string `json:"name"`
	Current       bool   `json:"current"`
	URL           string `json:"url"`
	Token         bool   `json:"token"`
	OperatorToken bool   `json:"operatorToken"`
}

func (o *contextListOptions) Run(w io.Writer) error {
	f, path, err := contextFile()
	if err != nil {
		return err
	}
	views := []contextView{}
	for _, n := range f.Names() {
		c := f.Contexts[n]
		views = append(views, contextView{Name: n, Current: n == f.CurrentContext, URL: c.URL,
			Token: c.Token != "", OperatorToken: c.OperatorToken != ""})
	}
	if o.json {
		return printJSON(w, views)
	}
	if len(views) == 0 {
		_, err := fmt.Fprintf(w, "no contexts in %s: add one with `lethe context set NAME --server URL`\n", path)
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CURRENT\tNAME\tURL\tTOKEN\tOPERATOR-TOKEN")
	for _, v := range views {
		mark := ""
		if v.Current {
			mark = "*"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", mark, v.Name, v.URL, isSet(v.Token), isSet(v.OperatorToken))
	}
	return tw.Flush()
}

func isSet(b bool) string {
	if b {
		return "set"
	}
	return "-"
}

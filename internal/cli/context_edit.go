package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/lethe-mq/lethe/client"
	"github.com/lethe-mq/lethe/internal/cli/cliconfig"
)

func newContextUseCmd() *cobra.Command {
	return &cobra.Command{
		Use:               "use NAME",
		Short:             "Make a context the current one",
		Example:           `  lethe context use prod`,
		Args:              oneArg("context name", "lethe context use NAME"),
		ValidArgsFunction: completeContexts,
		RunE: func(cmd *cobra.Command, args []string) error {
			f, path, err := contextFile()
			if err != nil {
				return err
			}
			if _, ok := f.Contexts[args[0]]; !ok {
				return fmt.Errorf("no context %q in %s: see `lethe context list`", args[0], path)
			}
			f.CurrentContext = args[0]
			if err := f.Save(path); err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "now using context %s\n", args[0])
			return err
		},
	}
}

type contextSetOptions struct {
	name                         string
	server, token, operatorToken string
	serverSet, tokenSet, opSet   bool
}

func newContextSetCmd() *cobra.Command {
	o := &contextSetOptions{}
	cmd := &cobra.Command{
		Use:   "set NAME [--server URL] [--token T] [--operator-token T]",
		Short: "Add a context or change it; the first one becomes current",
		Long: `Add the context NAME or change the fields given; the others keep their
values. Pass an empty value (--token "") to remove a token.`,
		Example: `  lethe context set local --server http://localhost:6632
  lethe context set prod --server https://lethe.example.com --token "$TOKEN"
  lethe context set prod --operator-token "$OP_TOKEN"`,
		Args:              oneArg("context name", "lethe context set NAME --server URL"),
		ValidArgsFunction: completeContexts,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.name = args[0]
			fl := cmd.Flags()
			o.serverSet, o.tokenSet, o.opSet = fl.Changed("server"), fl.Changed("token"), fl.Changed("operator-token")
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&o.server, "server", "", "lethe's URL, e.g. http://localhost:6632")
	cmd.Flags().StringVar(&o.token, "token", "", "bearer token (LETHE_AUTH_TOKEN of the server)")
	cmd.Flags().StringVar(&o.operatorToken, "operator-token", "", "operator token, for operations that delete data")
	return cmd
}

func (o *contextSetOptions) Validate() error {
	if err := cliconfig.ValidateName(o.name); err != nil {
		return err
	}
	if o.serverSet {
		if _, err := client.New(o.server); err != nil {
			return fmt.Errorf("--server: %w", err)
		}
	}
	return nil
}

func (o *contextSetOptions) Run(w io.Writer) error {
	f, path, err := contextFile()
	if err != nil {
		return err
	}
	c, exists := f.Contexts[o.name]
	if !exists && !o.serverSet {
		return fmt.Errorf("context %s is new: give its --server", o.name)
	}
	if o.serverSet {
		c.URL = o.server
	}
	if o.tokenSet {
		c.Token = o.token
	}
	if o.opSet {
		c.OperatorToken = o.operatorToken
	}
	f.Contexts[o.name] = c
	if f.CurrentContext == "" {
		f.CurrentContext = o.name
	}
	if err := f.Save(path); err != nil {
		return err
	}
	verb := "updated"
	if !exists {
		verb = "added"
	}
	_, err = fmt.Fprintf(w, "%s context %s (%s) in %s%s\n", verb, o.name, c.URL, path, currentNote(f, o.name))
	return err
}

func currentNote(f *cliconfig.File, name string) string {
	if f.CurrentContext == name {
		return "; it is the current context"
	}
	return ""
}

func newContextDeleteCmd() *cobra.Command {
	return &cobra.Command{
		Use:               "delete NAME",
		Short:             "Remove a context from the config file",
		Example:           `  lethe context delete staging`,
		Args:              oneArg("context name", "lethe context delete NAME"),
		ValidArgsFunction: completeContexts,
		RunE: func(cmd *cobra.Command, args []string) error {
			f, path, err := contextFile()
			if err != nil {
				return err
			}
			if _, ok := f.Contexts[args[0]]; !ok {
				return fmt.Errorf("no context %q in %s: see `lethe context list`", args[0], path)
			}
			delete(f.Contexts, args[0])
			note := ""
			if f.CurrentContext == args[0] {
				f.CurrentContext = ""
				note = "; no context is current now: pick one with `lethe context use NAME`"
			}
			if err := f.Save(path); err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "deleted context %s%s\n", args[0], note)
			return err
		},
	}
}

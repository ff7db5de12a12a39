package cli

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"

	"github.com/spf13/cobra"

	"github.com/lethe-mq/lethe/client"
	"github.com/lethe-mq/lethe/internal/cli/cliconfig"
)

// DefaultServerURL is where client commands look for lethe when no flag,
// environment variable or context says otherwise.
const DefaultServerURL = "http://localhost:6632"

// clientFlags are the flags every command that talks to a server shares.
// resolve fills server, token and operatorToken from, in order: the flags,
// the environment (LETHE_URL, LETHE_TOKEN), the context (--context,
// LETHE_CONTEXT or the config file's current one) and the default.
type clientFlags struct {
	server        string
	token         string
	operatorToken string
	context       string
	json          bool
}

// addClientFlags registers the connection flags and --json on cmd and its
// subcommands.
func addClientFlags(cmd *cobra.Command, f *clientFlags) {
	pf := cmd.PersistentFlags()
	pf.StringVar(&f.server, "server", "", "lethe's URL (default $LETHE_URL, else the context's, else "+DefaultServerURL+")")
	pf.StringVar(&f.token, "token", "", "bearer token (default $LETHE_TOKEN, else the context's)")
	pf.StringVar(&f.operatorToken, "operator-token", "", "token for operations that delete data (default: the context's, else --token)")
	pf.StringVar(&f.context, "context", "", "context of the config file to use (default $LETHE_CONTEXT, else its current context)")
	pf.BoolVar(&f.json, "json", false, "print JSON for scripts instead of tables")
	_ = cmd.RegisterFlagCompletionFunc("context", completeContexts)
}

// resolve fills what the flags left empty. A context named by --context is
// a flag, so it wins over LETHE_URL and LETHE_TOKEN; the current context
// of the file (or LETHE_CONTEXT) comes after them.
func (f *clientFlags) resolve(getenv func(string) string) error {
	name, named := f.context, f.context != ""
	if !named {
		name = getenv("LETHE_CONTEXT")
	}
	ctx, err := loadContext(getenv, name)
	if err != nil {
		return err
	}
	var fromFlag cliconfig.Context
	if named {
		fromFlag = ctx
	}
	f.server = cmp.Or(f.server, fromFlag.URL, getenv("LETHE_URL"), ctx.URL, DefaultServerURL)
	f.token = cmp.Or(f.token, fromFlag.Token, getenv("LETHE_TOKEN"), ctx.Token)
	f.operatorToken = cmp.Or(f.operatorToken, ctx.OperatorToken)
	return nil
}

// loadContext returns the named context of the config file, or its
// current one when name is empty; none at all is the zero Context.
func loadContext(getenv func(string) string, name string) (cliconfig.Context, error) {
	path, err := cliconfig.Path(getenv)
	if err != nil {
		if name != "" {
			return cliconfig.Context{}, err
		}
		return cliconfig.Context{}, nil
	}
	file, err := cliconfig.Load(path)
	if err != nil {
		return cliconfig.Context{}, err
	}
	if name == "" {
		name = file.CurrentContext
	}
	if name == "" {
		return cliconfig.Context{}, nil
	}
	ctx, ok := file.Contexts[name]
	if !ok {
		return cliconfig.Context{}, fmt.Errorf("context %q is not in %s: see `lethe context list`, or add it with `lethe context set %s --server URL`",
			name, path, name)
	}
	return ctx, nil
}

// newClient resolves the flags and builds a client with the token.
func (f *clientFlags) newClient() (*client.Client, error) {
	return f.build(func() string { return f.token })
}

// newOperatorClient is newClient for operations that delete data: it
// sends the operator token when one is known.
func (f *clientFlags) newOperatorClient() (*client.Client, error) {
	return f.build(func() string { return cmp.Or(f.operatorToken, f.token) })
}

func (f *clientFlags) build(token func() string) (*client.Client, error) {
	if err := f.resolve(os.Getenv); err != nil {
		return nil, err
	}
	c, err := client.New(f.server, client.WithToken(token()))
	if err != nil {
		return nil, fmt.Errorf("%w (set --server, LETHE_URL or the context's url)", err)
	}
	return c, nil
}

// explain turns a client error into one that says what to try next.
func (f *clientFlags) explain(err error) error {
	if err == nil {
		return nil
	}
	var apiErr *client.APIError
	switch {
	case client.IsUnreachable(err):
		return fmt.Errorf("cannot reach lethe at %s: is `lethe serve` running? set --server or LETHE_URL (%w)", f.server, err)
	case errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusUnauthorized:
		return fmt.Errorf("%s refused the request without a valid token: pass --token or set LETHE_TOKEN (%w)", f.server, err)
	case errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusForbidden:
		return fmt.Errorf("%w (pass the operator token with --operator-token, or put it in the context: `lethe context set NAME --operator-token T`)", err)
	}
	return err
}

// printJSON writes v indented, for --json.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// oneArg accepts exactly one positional argument and names it when missing.
func oneArg(what, usage string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		switch {
		case len(args) == 0 || args[0] == "":
			return fmt.Errorf("missing %s: usage: %s", what, usage)
		case len(args) > 1:
			return fmt.Errorf("too many arguments %q: usage: %s", args[1:], usage)
		}
		return nil
	}
}

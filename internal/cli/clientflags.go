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
)

// DefaultServerURL is where client commands look for lethe when neither
// --server nor LETHE_URL says otherwise.
const DefaultServerURL = "http://localhost:6632"

// clientFlags are the flags every command that talks to a server shares.
type clientFlags struct {
	server string
	token  string
	json   bool
}

// addClientFlags registers --server, --token and --json on cmd and its
// subcommands.
func addClientFlags(cmd *cobra.Command, f *clientFlags) {
	pf := cmd.PersistentFlags()
	pf.StringVar(&f.server, "server", "", "lethe's URL (default $LETHE_URL, else "+DefaultServerURL+")")
	pf.StringVar(&f.token, "token", "", "bearer token (default $LETHE_TOKEN)")
	pf.BoolVar(&f.json, "json", false, "print JSON for scripts instead of tables")
}

// resolve fills what the flags left empty from the environment.
func (f *clientFlags) resolve(getenv func(string) string) {
	f.server = cmp.Or(f.server, getenv("LETHE_URL"), DefaultServerURL)
	f.token = cmp.Or(f.token, getenv("LETHE_TOKEN"))
}

// newClient resolves the flags from the environment and builds a client.
func (f *clientFlags) newClient() (*client.Client, error) {
	f.resolve(os.Getenv)
	c, err := client.New(f.server, client.WithToken(f.token))
	if err != nil {
		return nil, fmt.Errorf("%w (set --server or LETHE_URL)", err)
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
		return fmt.Errorf("%w (pass the operator token with --token or LETHE_TOKEN)", err)
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

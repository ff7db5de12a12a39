package clienttest_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// consumerMain is a program of another module that uses the client and its
// wire types, as one that ran `go get github.com/lethe-mq/lethe/client`.
const consumerMain = `package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/lethe-mq/lethe/client"
	"github.com/lethe-mq/lethe/client/api"
)

func main() {
	c, err := client.New("http://localhost:6632", client.WithRetries(3))
	if err != nil {
		panic(err)
	}
	_, err = c.Push(context.Background(), api.PushItem{Queue: "orders", Payload: json.RawMessage("{}")})
	fmt.Println(err)
}
`

// The client module is usable on its own: a module that requires it, with
// no replace but the one standing for the published client itself, builds
// without the network, so the client needs no other module of this
// repository (a replace in the client's go.mod would not apply to its
// users, and a require of another lethe module could not be fetched).
func TestClientModuleBuildsOnItsOwn(t *testing.T) {
	t.Parallel()
	clientDir, err := filepath.Abs("../../client")
	if err != nil {
		t.Fatal(err)
	}

	// What the client's go.mod says of this repository's modules.
	out, err := exec.Command("go", "mod", "edit", "-json", filepath.Join(clientDir, "go.mod")).Output()
	if err != nil {
		t.Fatalf("go mod edit -json: %v", err)
	}
	var mod struct {
		Module  struct{ Path string }
		Require []struct{ Path string }
		Replace []struct{ Old struct{ Path string } }
	}
	if err := json.Unmarshal(out, &mod); err != nil {
		t.Fatal(err)
	}
	if mod.Module.Path != "github.com/lethe-mq/lethe/client" {
		t.Fatalf("client/go.mod is module %q", mod.Module.Path)
	}
	for _, r := range mod.Replace {
		t.Errorf("client/go.mod replaces %s; its users would not get the replacement", r.Old.Path)
	}
	for _, r := range mod.Require {
		if strings.HasPrefix(r.Path, "github.com/lethe-mq/lethe") {
			t.Errorf("client/go.mod requires %s, another module of this repository", r.Path)
		}
	}

	// A consumer module, built with the network off.
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/consumer\n\ngo 1.22\n")
	write("main.go", consumerMain)
	sums, err := os.ReadFile(filepath.Join(clientDir, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	write("go.sum", string(sums))
	env := append(os.Environ(),
		"GOWORK=off",
		"GOFLAGS=-mod=mod",
		"GOPROXY=off", // nothing is fetched: the module cache only
		"GOTOOLCHAIN=local",
		"GOSUMDB=off",
	)
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run("mod", "edit",
		"-require=github.com/lethe-mq/lethe/client@v0.0.0",
		"-replace=github.com/lethe-mq/lethe/client="+clientDir)
	run("build", "-o", filepath.Join(dir, "consumer"), ".")
}

// Package cliconfig reads and writes the CLI's config file,
// $XDG_CONFIG_HOME/lethe/config.yaml (~/.config/lethe/config.yaml): named
// contexts, each a server URL with its tokens, and the current one.
package cliconfig

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Context is one server the CLI talks to.
type Context struct {
	URL           string `yaml:"url"`
	Token         string `yaml:"token,omitempty"`
	OperatorToken string `yaml:"operator-token,omitempty"`
}

// File is the config file's content.
type File struct {
	CurrentContext string             `yaml:"current-context,omitempty"`
	Contexts       map[string]Context `yaml:"contexts,omitempty"`
}

// Path is where the config file lives: $XDG_CONFIG_HOME/lethe/config.yaml,
// else $HOME/.config/lethe/config.yaml. getenv is os.Getenv outside tests.
func Path(getenv func(string) string) (string, error) {
	if dir := getenv("XDG_CONFIG_HOME"); filepath.IsAbs(dir) {
		return filepath.Join(dir, "lethe", "config.yaml"), nil
	}
	home := getenv("HOME")
	if home == "" {
		return "", errors.New("cannot find the config file: neither XDG_CONFIG_HOME nor HOME is set")
	}
	return filepath.Join(home, ".config", "lethe", "config.yaml"), nil
}

// Load reads the file at path; a missing file is an empty File. Unknown
// keys are errors, so a misspelt key does not silently do nothing.
func Load(path string) (*File, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &File{Contexts: map[string]Context{}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read config file: %w", err)
	}
	f := &File{}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(f); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("config file %s: %w", path, err)
	}
	if f.Contexts == nil {
		f.Contexts = map[string]Context{}
	}
	if f.CurrentContext != "" {
		if _, ok := f.Contexts[f.CurrentContext]; !ok {
			return nil, fmt.Errorf("config file %s: current-context %q is not among its contexts: run `lethe context use NAME`",
				path, f.CurrentContext)
		}
	}
	return f, nil
}

// Save writes f to path, readable by its owner only (it holds tokens). It
// writes a temporary file and renames it, so a crash leaves the old file.
func (f *File) Save(path string) error {
	raw, err := yaml.Marshal(f)
	if err != nil {
		return fmt.Errorf("encode config file: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("create config folder: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".config-*.yaml")
	if err != nil {
		return fmt.Errorf("write config file: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(raw); err != nil {
		tmp.Close()
		return fmt.Errorf("write config file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write config file: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write config file: %w", err)
	}
	return nil
}

// Names lists the contexts in order.
func (f *File) Names() []string {
	names := make([]string, 0, len(f.Contexts))
	for n := range f.Contexts {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// ValidateName refuses names that would be awkward on a command line.
func ValidateName(name string) error {
	if name == "" || strings.TrimSpace(name) != name || strings.ContainsAny(name, " \t\n/") {
		return fmt.Errorf("context name %q must be non-empty, without spaces or slashes", name)
	}
	return nil
}

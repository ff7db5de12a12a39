// Package version says which build of lethe is running. A build reports
// Release, the newest version released in CHANGELOG.md (a test keeps the
// two in step), unless the linker set Version:
//
//	go build -ldflags "-X github.com/lethe-mq/lethe/internal/version.Version=v1.2.3" ./cmd/lethe
//
// deploy/build.sh does exactly that. Either way the VCS revision Go stamped
// into the binary, when there is one, says which commit it was built from.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Release is the newest released version of CHANGELOG.md. Cutting a
// version moves the changelog's Unreleased entries under a new heading and
// sets this to it (docs/releasing.md).
const Release = "0.1.0"

// Version is set at build time with -ldflags -X; Release otherwise.
var Version = Release

// Info describes the running binary.
type Info struct {
	Version   string `json:"version"`
	Revision  string `json:"revision,omitempty"`
	Modified  bool   `json:"modified,omitempty"`
	GoVersion string `json:"goVersion"`
}

// Get returns the build's version, with the VCS revision when the binary
// was built from a checkout (go build stamps it; go run, tests and
// -buildvcs=false do not).
func Get() Info {
	return fromBuildInfo(Version, debug.ReadBuildInfo)
}

func fromBuildInfo(v string, read func() (*debug.BuildInfo, bool)) Info {
	info := Info{Version: v, GoVersion: runtime.Version()}
	bi, ok := read()
	if !ok {
		return info
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Revision = s.Value
		case "vcs.modified":
			info.Modified = s.Value == "true"
		}
	}
	return info
}

// revision is the revision shortened to 12 characters, with ", modified"
// when the checkout had changes; "" when unknown.
func (i Info) revision() string {
	if i.Revision == "" {
		return ""
	}
	rev := i.Revision
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if i.Modified {
		rev += ", modified"
	}
	return rev
}

// String is the version for people and logs: "0.1.0", or "0.1.0
// (a1b2c3d4e5f6, modified)" for a build whose revision is known.
func (i Info) String() string {
	if rev := i.revision(); rev != "" {
		return fmt.Sprintf("%s (%s)", i.Version, rev)
	}
	return i.Version
}

// Long is what `lethe version` prints after "lethe ": the version, the
// revision when known and the Go version, as in "0.1.0 (revision
// a1b2c3d4e5f6, go1.26.0)" or "0.1.0 (go1.26.0)".
func (i Info) Long() string {
	if rev := i.revision(); rev != "" {
		return fmt.Sprintf("%s (revision %s, %s)", i.Version, rev, i.GoVersion)
	}
	return fmt.Sprintf("%s (%s)", i.Version, i.GoVersion)
}

// String is Get().String().
func String() string { return Get().String() }

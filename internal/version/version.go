// Package version says which build of lethe is running. Release builds set
// Version with the linker:
//
//	go build -ldflags "-X github.com/lethe-mq/lethe/internal/version.Version=v1.2.3" ./cmd/lethe
//
// deploy/build.sh does exactly that. Other builds report "dev" plus the VCS
// revision Go stamped into the binary, when there is one.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Version is set at build time with -ldflags -X; "dev" otherwise.
var Version = "dev"

// Info describes the running binary.
type Info struct {
	Version   string `json:"version"`
	Revision  string `json:"revision,omitempty"`
	Modified  bool   `json:"modified,omitempty"`
	GoVersion string `json:"goVersion"`
}

// Get returns the build's version, with the VCS revision when the binary
// was built from a checkout (go build stamps it; go run and tests do not).
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

// String is the version for people and logs: "v1.2.3", or "dev (a1b2c3d4e5f6,
// modified)" for a development build.
func (i Info) String() string {
	if i.Revision == "" {
		return i.Version
	}
	rev := i.Revision
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if i.Modified {
		rev += ", modified"
	}
	return fmt.Sprintf("%s (%s)", i.Version, rev)
}

// String is Get().String().
func String() string { return Get().String() }

package version

import (
	"runtime/debug"
	"testing"
)

func TestInfo(t *testing.T) {
	t.Parallel()
	withVCS := func() (*debug.BuildInfo, bool) {
		return &debug.BuildInfo{Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123456789abcdef0123"},
			{Key: "vcs.modified", Value: "true"},
		}}, true
	}
	none := func() (*debug.BuildInfo, bool) { return nil, false }
	cases := []struct {
		version string
		read    func() (*debug.BuildInfo, bool)
		want    string
	}{
		{"dev", withVCS, "dev (0123456789ab, modified)"},
		{"v1.2.3", withVCS, "v1.2.3 (0123456789ab, modified)"},
		{"v1.2.3", none, "v1.2.3"},
		{"dev", func() (*debug.BuildInfo, bool) { return &debug.BuildInfo{}, true }, "dev"},
	}
	for _, c := range cases {
		if got := fromBuildInfo(c.version, c.read).String(); got != c.want {
			t.Errorf("version %q: %q, want %q", c.version, got, c.want)
		}
	}
	if got := Get(); got.Version != Version || got.GoVersion == "" {
		t.Errorf("Get() = %+v, want Version %q and a Go version", got, Version)
	}
}

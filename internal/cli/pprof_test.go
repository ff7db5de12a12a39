package cli

import (
	"strings"
	"testing"
)

// The profiler listens on loopback only: every other address, the
// wildcard included, is refused with the reason.
func TestPprofListensOnLoopbackOnly(t *testing.T) {
	for _, ok := range []string{"127.0.0.1:6060", "[::1]:6060", "localhost:6060", "127.0.0.2:0"} {
		if err := loopbackOnly(ok); err != nil {
			t.Errorf("%s: %v, want accepted", ok, err)
		}
	}
	for _, bad := range []string{":6060", "0.0.0.0:6060", "[::]:6060", "192.0.2.1:6060", "example.com:6060", "6060"} {
		if err := loopbackOnly(bad); err == nil || !strings.Contains(err.Error(), "loopback") {
			t.Errorf("%s: %v, want refused naming loopback", bad, err)
		}
	}
}

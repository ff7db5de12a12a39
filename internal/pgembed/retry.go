package pgembed

import (
	"net"
	"strings"
)

// freePort asks the kernel for an unused loopback port. Another process
// may grab it before postgres binds, so Start retries on "address already
// in use" when it picked the port itself.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// portTaken reports whether a failed start's log says the port was busy.
func portTaken(log string) bool {
	return strings.Contains(log, "Address already in use") ||
		strings.Contains(log, "could not create any TCP/IP sockets")
}

// oldChildrenLinger reports whether a failed start's log says processes of
// a previous, killed server still hold its shared memory. They exit on
// their own once they notice the postmaster died, so waiting helps.
func oldChildrenLinger(log string) bool {
	return strings.Contains(log, "pre-existing shared memory block")
}

package cli

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"time"
)

// startPprof serves Go's profiler on LETHE_PPROF_ADDR (e.g. 127.0.0.1:6060)
// when set, for profiling a replica under load. Off by default. The
// profiler answers without a credential and its heap profiles hold
// payloads, so it listens on loopback only: another address is refused.
func startPprof(log *slog.Logger) error {
	addr := os.Getenv("LETHE_PPROF_ADDR")
	if addr == "" {
		return nil
	}
	if err := loopbackOnly(addr); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("LETHE_PPROF_ADDR: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		log.Info("pprof listening", "addr", ln.Addr().String())
		if err := srv.Serve(ln); err != nil {
			log.Error("pprof stopped", "error", err)
		}
	}()
	return nil
}

// loopbackOnly refuses a host:port whose host is not a loopback address
// (an empty host or 0.0.0.0 is every address).
func loopbackOnly(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("LETHE_PPROF_ADDR must be host:port on loopback (for example 127.0.0.1:6060), got %q", addr)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("LETHE_PPROF_ADDR=%s is refused: the profiler answers without a credential and its heap profiles "+
		"hold message payloads, so it listens on loopback only (for example 127.0.0.1:6060; reach it through an SSH tunnel)", addr)
}

package cli

import (
	"log/slog"
	"net/http"
	"net/http/pprof"
	"os"
)

// startPprof serves Go's profiler on LETHE_PPROF_ADDR (e.g. 127.0.0.1:6060)
// when set, for profiling a replica under load. Off by default.
func startPprof(log *slog.Logger) {
	addr := os.Getenv("LETHE_PPROF_ADDR")
	if addr == "" {
		return
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	go func() {
		log.Info("pprof listening", "addr", addr)
		if err := http.ListenAndServe(addr, mux); err != nil {
			log.Error("pprof stopped", "error", err)
		}
	}()
}

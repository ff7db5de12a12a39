// Command soakjudge judges a soak's samples again with the current
// verdict and rewrites its report next to it:
//
//	go run ./bench/soakjudge bench/out/runs/RUN/soak.json   # RUN: the soak's own folder
//
// For a soak of hours whose verdict rules changed after it ran: the
// samples are measurements, the verdict is a reading of them.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/lethe-mq/lethe/bench/internal/soak"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go run ./bench/soakjudge PATH/soak.json")
		os.Exit(2)
	}
	path := os.Args[1]
	r, err := soak.Rejudge(path, "go run ./bench/soakjudge "+path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soakjudge:", err)
		os.Exit(1)
	}
	written, err := r.Write(filepath.Dir(path))
	for _, p := range written {
		fmt.Println("wrote", p)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "soakjudge:", err)
		os.Exit(1)
	}
	fmt.Println(strings.TrimSpace(r.Verdict.Line()))
}

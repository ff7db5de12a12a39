package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
)

// machine describes the hardware the figures come from.
func machine() string {
	model, mem := "unknown CPU", ""
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	if f, err := os.Open("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "MemTotal:") {
				var kb int64
				if _, err := fmt.Sscanf(strings.TrimPrefix(sc.Text(), "MemTotal:"), "%d", &kb); err == nil {
					mem = fmt.Sprintf(", %.0f GiB RAM", float64(kb)/(1<<20))
				}
				break
			}
		}
		f.Close()
	}
	kernel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	return fmt.Sprintf("%s, %d cores%s, Linux %s", model, runtime.NumCPU(), mem, strings.TrimSpace(string(kernel)))
}

// letheRevision is the commit the bench ran from, marked when the tree had
// uncommitted changes. It only reads git.
func letheRevision(ctx context.Context, root string) string {
	rev, err := exec.CommandContext(ctx, "git", "-C", root, "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	s := strings.TrimSpace(string(rev))
	if st, err := exec.CommandContext(ctx, "git", "-C", root, "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(st) > 0 {
		s += " with uncommitted changes"
	}
	return s
}

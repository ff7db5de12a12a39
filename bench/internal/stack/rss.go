package stack

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ResetPeakRSS restarts the kernel's peak-RSS counter (VmHWM) of pid, so
// each scenario's peak is its own. Linux 4.0 and later.
func ResetPeakRSS(pid int) error {
	if pid == 0 {
		return nil
	}
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
}

// PeakRSS reads VmHWM of pid in bytes.
func PeakRSS(pid int) (int64, error) {
	return statusField(pid, "VmHWM:")
}

// RSS reads VmRSS of pid in bytes.
func RSS(pid int) (int64, error) {
	return statusField(pid, "VmRSS:")
}

func statusField(pid int, field string) (int64, error) {
	if pid == 0 {
		return 0, fmt.Errorf("no local lethe process to read memory from")
	}
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, field) {
			continue
		}
		fields := strings.Fields(line[len(field):])
		if len(fields) == 0 {
			break
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return 0, err
		}
		return kb * 1024, nil
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}

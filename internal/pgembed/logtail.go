package pgembed

import (
	"io"
	"os"
	"strings"
)

// tailBytes bounds how much of the log we read after a failed start:
// enough for its messages without slurping a huge file.
const tailBytes = 16 << 10

// severities mark the lines of a server log or tool output that say why
// something failed.
var severities = []string{"PANIC:", "FATAL:", "ERROR:", "error:"}

// keyLine picks the line of out that says why something failed, from its
// severity on (dropping the log line prefix), or else the last line.
func keyLine(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for _, line := range lines {
		for _, sev := range severities {
			if i := strings.Index(line, sev); i >= 0 {
				return strings.Join(strings.Fields(line[i:]), " ")
			}
		}
	}
	return strings.Join(strings.Fields(lines[len(lines)-1]), " ")
}

// logSince returns what was appended to the log after offset, to look
// for a specific failure of the latest attempt only.
func logSince(path string, offset int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return ""
	}
	b, _ := io.ReadAll(io.LimitReader(f, tailBytes))
	return string(b)
}

func logSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

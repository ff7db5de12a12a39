package pgembed

import (
	"io"
	"os"
	"strings"
)

// tailBytes bounds how much of the log we read: enough for ~20 lines of
// PostgreSQL messages without slurping a huge file.
const tailBytes = 16 << 10

// logTail returns the last n lines of the server log, which is where the
// real reason for a failed start is written.
func logTail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return "(no server log: " + err.Error() + ")"
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > tailBytes {
		f.Seek(fi.Size()-tailBytes, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	return lastLines(string(b), n)
}

// logSince returns what was appended to the log after offset, to look
// for a specific failure of the latest attempt only.
func logSince(path string, offset int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	f.Seek(offset, io.SeekStart)
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

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

package cli

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// progressWidth is the bar's width in characters.
const progressWidth = 30

// progressRedraw is the shortest time between two redraws of the bar.
const progressRedraw = 100 * time.Millisecond

// progress shows how far a long operation got, on stderr. On a terminal
// it is a bar redrawn in place; elsewhere (a log file, CI) it is a plain
// line at every tenth, so logs stay short and readable.
type progress struct {
	w        io.Writer
	tty      bool
	label    string
	total    int
	done     int
	lastStep int // tenths printed, without a terminal
	drawn    time.Time
	now      func() time.Time
}

// newProgress starts a progress report of total steps on w.
func newProgress(w io.Writer, label string, total int) *progress {
	return &progress{w: w, tty: isTerminalWriter(w), label: label, total: total, now: time.Now}
}

// Add records n more steps done.
func (p *progress) Add(n int) {
	p.done = min(p.done+n, p.total)
	if p.tty {
		if now := p.now(); p.done == p.total || now.Sub(p.drawn) >= progressRedraw {
			p.drawn = now
			p.drawBar()
		}
		return
	}
	if p.total == 0 {
		return
	}
	if step := p.done * 10 / p.total; step > p.lastStep {
		p.lastStep = step
		fmt.Fprintf(p.w, "%s: %d/%d (%d%%)\n", p.label, p.done, p.total, p.done*100/p.total)
	}
}

// Finish ends the report; on a terminal it moves past the bar.
func (p *progress) Finish() {
	if p.tty {
		p.drawBar()
		fmt.Fprintln(p.w)
	}
}

func (p *progress) drawBar() {
	filled := progressWidth
	pct := 100
	if p.total > 0 {
		filled = p.done * progressWidth / p.total
		pct = p.done * 100 / p.total
	}
	bar := strings.Repeat("█", filled) + strings.Repeat("░", progressWidth-filled)
	fmt.Fprintf(p.w, "\r%s %s %d/%d (%d%%)", p.label, bar, p.done, p.total, pct)
}

// isTerminalWriter reports whether w is a terminal.
func isTerminalWriter(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// confirm asks question on w and reads the answer from r: only "y" or
// "yes" agrees; an empty answer or the end of input refuses.
func confirm(r io.Reader, w io.Writer, question string) bool {
	fmt.Fprintf(w, "%s [y/N] ", question)
	line, _ := bufio.NewReader(r).ReadString('\n')
	if !strings.HasSuffix(line, "\n") {
		fmt.Fprintln(w) // no answer was typed: end the prompt's line
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true
	}
	return false
}

package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/internal/testserver"
)

func TestProgressWithoutATerminalPrintsTenths(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	p := newProgress(&buf, "replay", 20)
	for range 20 {
		p.Add(1)
	}
	p.Finish()
	ls := lines(buf.String())
	if len(ls) != 10 || ls[0] != "replay: 2/20 (10%)" || ls[9] != "replay: 20/20 (100%)" || strings.Contains(buf.String(), "\r") {
		t.Fatalf("plain progress printed %q, want one line per tenth", ls)
	}
}

func TestProgressOnATerminalRedrawsOneBar(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	now := time.Unix(0, 0)
	p := &progress{w: &buf, tty: true, label: "push", total: 4, now: func() time.Time { return now }}
	p.Add(1) // drawn: first draw
	p.Add(1) // not drawn: too soon
	now = now.Add(time.Second)
	p.Add(1)
	p.Add(1) // drawn: done
	p.Finish()
	want := "\rpush ███████░░░░░░░░░░░░░░░░░░░░░░░ 1/4 (25%)" +
		"\rpush ██████████████████████░░░░░░░░ 3/4 (75%)" +
		"\rpush ██████████████████████████████ 4/4 (100%)" +
		"\rpush ██████████████████████████████ 4/4 (100%)\n"
	if got := buf.String(); got != want {
		t.Fatalf("terminal progress wrote\n%q\nwant\n%q", got, want)
	}
}

func TestPushShowsProgressPastOneRequest(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{}).URL
	var in strings.Builder
	for i := range 2500 {
		in.WriteString("{\"n\":" + strings.Repeat("1", 1+i%3) + "}\n")
	}
	out, errOut, err := letheErr(t, in.String(), "push", "bulk", "--server="+srv)
	if err != nil {
		t.Fatal(err)
	}
	wantContains(t, out, "pushed 2500 messages to bulk: 2500 queued")
	wantContains(t, errOut, "pushing to bulk: 1000/2500 (40%)", "pushing to bulk: 2500/2500 (100%)")
}

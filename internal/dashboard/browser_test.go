package dashboard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// browserBudget bounds one browser test from start to end.
const browserBudget = 90 * time.Second

// waitBudget bounds one wait for the page.
const waitBudget = 15 * time.Second

// chromium finds Debian's chromium. Without one the test is skipped, unless
// LETHE_REQUIRE_BROWSER is set (CI sets it), which makes it a failure.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("LETHE_REQUIRE_BROWSER") != "" {
		t.Fatal("LETHE_REQUIRE_BROWSER is set but no chromium is installed: apt-get install -y chromium")
	}
	t.Skip("chromium is not installed (apt-get install -y chromium); set LETHE_REQUIRE_BROWSER=1 to fail instead")
	return ""
}

// browser is one headless chromium tab on the dashboard, with every
// console error and uncaught exception of the page collected.
type browser struct {
	t    *testing.T
	ctx  context.Context
	base string

	mu       sync.Mutex
	problems []string
}

func startBrowser(t *testing.T, base string) *browser {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium(t)),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(allocCtx)
	b := &browser{t: t, ctx: ctx, base: base}
	// The first call starts the browser; its context must not time out.
	if err := chromedp.Listen(ctx, b.watch); err != nil {
		cancelTab()
		cancelAlloc()
		t.Fatalf("start chromium: %v", err)
	}
	deadline, cancelDeadline := context.WithTimeout(ctx, browserBudget)
	b.ctx = deadline
	t.Cleanup(func() {
		cancelDeadline()
		cancelTab()
		cancelAlloc()
	})
	return b
}

// watch records console errors, uncaught exceptions and logged errors
// (failed requests included). It runs on chromedp's reading goroutine.
func (b *browser) watch(ev any) {
	var problem string
	switch e := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeAssert {
			var parts []string
			for _, a := range e.Args {
				if a.Value != nil {
					parts = append(parts, string(a.Value))
				} else {
					parts = append(parts, a.Description)
				}
			}
			problem = "console." + string(e.Type) + ": " + strings.Join(parts, " ")
		}
	case *runtime.EventExceptionThrown:
		d := e.ExceptionDetails
		problem = "uncaught exception: " + d.Text
		if d.Exception != nil {
			problem += " " + d.Exception.Description
		}
	case *log.EventEntryAdded:
		if e.Entry.Level == log.EntryLevelError {
			problem = fmt.Sprintf("logged error (%s): %s %s", e.Entry.Source, e.Entry.Text, e.Entry.URL)
		}
	}
	if problem != "" {
		b.mu.Lock()
		b.problems = append(b.problems, problem)
		b.mu.Unlock()
	}
}

// noErrors fails the test on every console error collected since the last
// call, except failed requests with one of the allowed statuses (a test
// that checks a refusal expects its 401 or 403).
func (b *browser) noErrors(step string, allowedStatuses ...int) {
	b.t.Helper()
	b.mu.Lock()
	got := b.problems
	b.problems = nil
	b.mu.Unlock()
	for _, p := range got {
		allowed := false
		for _, s := range allowedStatuses {
			allowed = allowed || strings.HasPrefix(p, "logged error (network)") && strings.Contains(p, fmt.Sprintf("status of %d", s))
		}
		if !allowed {
			b.t.Errorf("%s: the page reported an error: %s", step, p)
		}
	}
}

func (b *browser) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, steps...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// eval runs a JavaScript expression and decodes its JSON value into out.
func (b *browser) eval(expr string, out any) {
	b.t.Helper()
	raw, err := chromedp.Run(b.ctx, chromedp.Evaluate[json.RawMessage](expr))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", clip(expr), err)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		b.t.Fatalf("evaluate %s: decode %s: %v", clip(expr), raw, err)
	}
}

func clip(s string) string {
	if len(s) > 120 {
		return s[:120] + "..."
	}
	return s
}

// waitFor polls a JavaScript condition until it is true.
func (b *browser) waitFor(what, cond string) {
	b.t.Helper()
	if _, err := chromedp.Run(b.ctx, chromedp.Poll[bool](cond, chromedp.WithPollingTimeout(waitBudget),
		chromedp.WithPollingInterval(20*time.Millisecond))); err != nil {
		var state map[string]string
		b.eval(`({page: main.dataset.page, state: main.dataset.state, render: main.dataset.render, text: main.innerText.slice(0, 300)})`, &state)
		b.t.Fatalf("waiting for %s (%s): %v; the page is %v", what, cond, err, state)
	}
}

// renderCount is how many times the page has rendered.
func (b *browser) renderCount() string {
	var n string
	b.eval(`document.getElementById('main').dataset.render || ''`, &n)
	return n
}

// waitRendered waits for a render after the one counted before, and
// requires it to be page's in the wanted state (an error page fails at
// once, with what the page and its console said).
func (b *browser) waitRendered(before, page, state string) {
	b.t.Helper()
	b.waitFor(page+" to render", fmt.Sprintf(`(() => { const m = document.getElementById('main');
		return m.dataset.render && m.dataset.render !== %q && m.dataset.state !== 'loading'; })()`, before))
	b.requireShown(page, state)
}

func (b *browser) requireShown(page, state string) {
	b.t.Helper()
	var got struct{ Page, State, Text string }
	b.eval(`(() => { const m = document.getElementById('main');
		return {page: m.dataset.page, state: m.dataset.state, text: m.innerText.slice(0, 300)}; })()`, &got)
	if got.Page != page || got.State != state {
		b.mu.Lock()
		problems := b.problems
		b.mu.Unlock()
		b.t.Fatalf("the dashboard shows page %s in state %s, want %s %s: %q; console: %q", got.Page, got.State, page, state, got.Text, problems)
	}
}

// open loads the dashboard at the hash route (first time) or moves to it,
// and waits for the page to be ready.
func (b *browser) open(hash, page string) {
	b.t.Helper()
	b.openIn(hash, page, "ready")
}

func (b *browser) openIn(hash, page, state string) {
	b.t.Helper()
	var href string
	b.eval(`location.href`, &href)
	if !strings.HasPrefix(href, b.base) {
		b.do("load the dashboard", chromedp.Navigate(b.base+"/#/"+hash))
		b.waitFor(page+" to render", `(() => { const m = document.getElementById('main');
			return m && m.dataset.render && m.dataset.state !== 'loading'; })()`)
		b.requireShown(page, state)
		return
	}
	before := b.renderCount()
	if strings.TrimPrefix(href, b.base+"/#/") == hash {
		b.do("refresh", chromedp.Click(chromedp.ID("refresh")))
	} else {
		b.do("go to "+hash, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`void (location.hash = %q)`, "#/"+hash)))
	}
	b.waitRendered(before, page, state)
}

// refresh renders the current page again and waits for it.
func (b *browser) refresh(page string) {
	b.t.Helper()
	before := b.renderCount()
	b.do("refresh", chromedp.Click(chromedp.ID("refresh")))
	b.waitRendered(before, page, "ready")
}

// useToken enters t in the token form.
func (b *browser) useToken(tok string) {
	b.t.Helper()
	b.do("enter the token", chromedp.SetValue(chromedp.ID("token-input"), tok),
		chromedp.Click(chromedp.CSS(`#token-form button[type=submit]`)))
}

// confirm accepts the confirmation dialog a destructive button opened.
func (b *browser) confirm() {
	b.t.Helper()
	b.do("confirm", chromedp.WaitVisible(chromedp.ID("confirm-ok")), chromedp.Click(chromedp.ID("confirm-ok")),
		chromedp.WaitNotVisible(chromedp.ID("confirm")))
}

// screenshot saves the viewport-wide page as docs/img/NAME.png when
// LETHE_SCREENSHOTS names a folder (see docs/dashboard.md).
func (b *browser) screenshot(name string) {
	b.t.Helper()
	dir := os.Getenv("LETHE_SCREENSHOTS")
	if dir == "" {
		return
	}
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

package dashboard_test

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/lethe-mq/lethe/internal/dashboard"
)

// Every asset is served with a policy that keeps the page to its own
// assets and server; names with folders or dots do not escape the folder.
func TestAssetsAreServedLockedDown(t *testing.T) {
	t.Parallel()
	for name, ctype := range map[string]string{dashboard.Index: "text/html", "main.js": "text/javascript", "style.css": "text/css"} {
		a, ok := dashboard.Open(name)
		if !ok {
			t.Fatalf("asset %s is missing", name)
		}
		w := httptest.NewRecorder()
		a.ServeHTTP(w, httptest.NewRequest("GET", "/dashboard/"+name, nil))
		h := w.Result().Header
		if !strings.HasPrefix(h.Get("Content-Type"), ctype) || w.Code != http.StatusOK {
			t.Errorf("%s: %d %q, want 200 %s", name, w.Code, h.Get("Content-Type"), ctype)
		}
		if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "connect-src 'self'") {
			t.Errorf("%s: Content-Security-Policy %q lets the page load or call elsewhere", name, csp)
		}
		if h.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: no X-Content-Type-Options: nosniff", name)
		}
	}
	for _, name := range []string{"", ".", "..", "../dashboard.go", "assets/main.js", "nope.js", "dashboard.go"} {
		if _, ok := dashboard.Open(name); ok {
			t.Errorf("Open(%q) found an asset", name)
		}
	}
}

// Nothing in the assets reaches outside the server: no absolute URL in a
// src, href, import or fetch, and no use of innerHTML (server text is
// untrusted and is always set as text).
func TestAssetsFetchNothingFromElsewhere(t *testing.T) {
	t.Parallel()
	external := regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?(https?:)?//|import[^;]*["'](https?:)?//|fetch\(\s*["'](https?:)?//`)
	for _, name := range dashboard.Names() {
		a, _ := dashboard.Open(name)
		body := string(a.Body())
		if m := external.FindString(body); m != "" {
			t.Errorf("%s reaches outside the server: %q", name, m)
		}
		if strings.Contains(body, "innerHTML") || strings.Contains(body, "insertAdjacentHTML") {
			t.Errorf("%s parses text as HTML", name)
		}
	}
}

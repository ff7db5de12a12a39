// Package dashboard is lethe's web dashboard: plain HTML, CSS and
// JavaScript modules embedded in the binary, served at / by package
// httpapi. The pages read only lethe's HTTP API, with the token the user
// enters (kept in the browser's sessionStorage); nothing is fetched from
// anywhere else, which the Content-Security-Policy enforces.
package dashboard

import (
	"embed"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strconv"
)

//go:embed assets
var assets embed.FS

// contentSecurityPolicy lets the page load only its own assets and talk
// only to the server that served it; no inline script or style.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Index is the page every view of the dashboard starts from.
const Index = "index.html"

// Asset is one embedded file of the dashboard.
type Asset struct {
	name string
	body []byte
}

// Open finds the asset called name (a file name, no folders).
func Open(name string) (Asset, bool) {
	if name == "" || path.Base(name) != name || name == "." {
		return Asset{}, false
	}
	body, err := fs.ReadFile(assets, "assets/"+name)
	if err != nil {
		return Asset{}, false
	}
	return Asset{name: name, body: body}, true
}

// ServeHTTP answers the asset with headers that keep the page to its own
// assets and its own server.
func (a Asset) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	ctype := mime.TypeByExtension(path.Ext(a.name))
	if path.Ext(a.name) == ".js" {
		ctype = "text/javascript; charset=utf-8" // some systems map .js to application/javascript
	}
	h.Set("Content-Type", ctype)
	h.Set("Content-Length", strconv.Itoa(len(a.body)))
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	// Assets change with the binary; revalidating is cheap on a local API.
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(a.body)
	}
}

// Names lists the assets.
func Names() []string {
	entries, _ := fs.ReadDir(assets, "assets")
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// Body is the asset's content.
func (a Asset) Body() []byte { return a.body }

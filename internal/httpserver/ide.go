package httpserver

import (
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"html/template"
	"io/fs"
	"net/http"
	"regexp"
)

// The IDE's scripts and styles are served from the binary: the same files gqlgen's GraphiQL
// page would fetch from a CDN (npm's graphiql 4.1.2, react and react-dom 18.2.0,
// @graphiql/plugin-explorer 4.0.6; licences in ide/LICENSES.txt), so the IDE works where a
// CDN is blocked or unreachable. The names carry the versions, so they can be cached forever;
// the addresses of the favicon and of the page's own script and styles carry their hash instead.
//
//go:embed ide/*.js ide/*.css ide/favicon.svg
var ideFiles embed.FS

// familyQuery is the query the IDE opens on: the README's example family query, copied by
// go generate (ide/readmequery.go), since the README lies outside this package.
//
//go:generate go run ide/readmequery.go
//go:embed ide/family.graphql
var familyQuery string

const (
	ideJS          = "graphiql-4.1.2.min.js"
	ideCSS         = "graphiql-4.1.2.min.css"
	ideReact       = "react-18.2.0.production.min.js"
	ideReactDOM    = "react-dom-18.2.0.production.min.js"
	ideExplorerJS  = "plugin-explorer-4.0.6.umd.js"
	ideExplorerCSS = "plugin-explorer-4.0.6.css"
	ideFavicon     = "favicon.svg"
	idePageJS      = "ide.js"
	idePageCSS     = "ide.css"
)

// ideAsset is one file the page loads, with its subresource integrity.
type ideAsset struct {
	URL, SRI string
}

func asset(name string) ideAsset { return ideAsset{URL: "/ide/" + name, SRI: integrity(name)} }

// versioned is asset for a file whose name carries no version.
func versioned(name string) ideAsset {
	return ideAsset{URL: "/ide/" + name + "?v=" + version(name), SRI: integrity(name)}
}

// idePage is the GraphiQL page for endpoint, loading its files from /ide/ with subresource
// integrity computed from the embedded files themselves. A first visit, and every new tab,
// opens on the README's family query; the query, variables and operation name then live in
// the address, so an IDE link can be shared and opens on the same query. Headers never do
// (ide/ide.js): they stay in the browser's storage.
//
// The page is gqlgen's GraphiQL page (playground.Handler) with a favicon and a default query,
// which gqlgen's options cannot add, and its script in a file of its own, so that its policy
// (ideCSP) allows no inline script.
func idePage(title, endpoint string) http.Handler {
	data := struct {
		Title, Endpoint, DefaultQuery string
		IDEHeader                     string
		Favicon                       string
		React, ReactDOM, JS, CSS      ideAsset
		ExplorerJS, ExplorerCSS       ideAsset
		PageJS, PageCSS               ideAsset
	}{
		Title: title, Endpoint: endpoint, DefaultQuery: familyQuery, IDEHeader: IDEHeader,
		Favicon: "/ide/" + ideFavicon + "?v=" + version(ideFavicon),
		React:   asset(ideReact), ReactDOM: asset(ideReactDOM), JS: asset(ideJS), CSS: asset(ideCSS),
		ExplorerJS: asset(ideExplorerJS), ExplorerCSS: asset(ideExplorerCSS),
		PageJS: versioned(idePageJS), PageCSS: versioned(idePageCSS),
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Content-Security-Policy", ideCSP(r.Host))
		h.Set("X-Frame-Options", "DENY") // for browsers that predate frame-ancestors
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Content-Type-Options", "nosniff")
		_ = idePageTemplate.Execute(w, data) // the data is fixed, so only a gone client fails it
	})
}

// plainHost is a Host header fit to be written into a policy: a name or an address, and a port.
var plainHost = regexp.MustCompile(`^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$`)

// ideCSP is the IDE page's Content-Security-Policy: scripts, styles, images and fonts from the
// gateway only (GraphiQL's icons and fonts are data: URLs in its styles); requests to the
// gateway only, its WebSockets included ('self' covers ws: and wss: in current browsers; the
// host is named too for the others); the Family tab's frame from the gateway; and no page may
// frame the IDE, which would let it lure clicks onto the IDE's buttons.
func ideCSP(host string) string {
	connect := "'self'"
	if plainHost.MatchString(host) {
		connect += " ws://" + host + " wss://" + host
	}
	return "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self' data:; " +
		"connect-src " + connect + "; frame-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
}

// IDEHeader is the header the IDE's requests carry. It proves nothing (anyone can send it), so
// it is heeded only where the IDE's user is the gateway's: a gateway running against its
// embedded sandbox.
const IDEHeader = "X-Gateway-IDE"

// FromIDE reports whether a request's headers say it comes from the IDE.
func FromIDE(h http.Header) bool { return h.Get(IDEHeader) != "" }

// ideAssets serves the IDE's files under /ide/.
func ideAssets() http.Handler {
	sub, _ := fs.Sub(ideFiles, "ide") // the directory is embedded, so it exists
	files := http.StripPrefix("/ide/", http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		files.ServeHTTP(w, r)
	})
}

func integrity(name string) string {
	sum := ideFileHash(name)
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}

// version names the content of an embedded file in its address, so that an address, cached
// forever, always leads to the same bytes.
func version(name string) string {
	sum := ideFileHash(name)
	return hex.EncodeToString(sum[:6])
}

func ideFileHash(name string) [sha256.Size]byte {
	data, err := ideFiles.ReadFile("ide/" + name)
	if err != nil {
		panic("httpserver: the IDE file " + name + " is not embedded") // a build mistake, caught by any test
	}
	return sha256.Sum256(data)
}

var idePageTemplate = template.Must(template.New("ide").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>{{.Title}}</title>
  <link rel="icon" type="image/svg+xml" href="{{.Favicon}}">
  <link rel="stylesheet" href="{{.PageCSS.URL}}" integrity="{{.PageCSS.SRI}}" crossorigin="anonymous">
  <script src="{{.React.URL}}" integrity="{{.React.SRI}}" crossorigin="anonymous"></script>
  <script src="{{.ReactDOM.URL}}" integrity="{{.ReactDOM.SRI}}" crossorigin="anonymous"></script>
  <link rel="stylesheet" href="{{.CSS.URL}}" integrity="{{.CSS.SRI}}" crossorigin="anonymous">
  <link rel="stylesheet" href="{{.ExplorerCSS.URL}}" integrity="{{.ExplorerCSS.SRI}}" crossorigin="anonymous">
</head>
<body>
  <div id="graphiql" data-endpoint="{{.Endpoint}}" data-ide-header="{{.IDEHeader}}" data-default-query="{{.DefaultQuery}}"><div class="loading">Loading…</div></div>
  <script src="{{.JS.URL}}" integrity="{{.JS.SRI}}" crossorigin="anonymous"></script>
  <script src="{{.ExplorerJS.URL}}" integrity="{{.ExplorerJS.SRI}}" crossorigin="anonymous"></script>
  <script src="{{.PageJS.URL}}" integrity="{{.PageJS.SRI}}" crossorigin="anonymous"></script>
</body>
</html>
`))

// Package familypage serves the family graph drawn: GET /family/{wid} is a page that asks the
// gateway's own GraphQL endpoint for the top account's cards and relationships, with the
// caller's credentials, and draws them with Cytoscape.js and the ELK layered layout, top-down
// (creators above their trusts, owners above their entities, testators above their wills), with
// room kept for every label. It stays live over the gateway's SSE subscriptions. Its scripts are
// served from the binary (cytoscape 3.34.4, elkjs 0.12.1; licences in assets/LICENSES.txt), so
// the page works offline and asks nothing of any other origin.
package familypage

import (
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"html/template"
	"io/fs"
	"net/http"
	"regexp"
)

//go:embed assets
var assets embed.FS

// The files the page loads; their names carry their versions, so they are cached for ever.
const (
	cytoscapeJS = "cytoscape-3.34.4.min.js"
	elkJS       = "elk-0.12.1.bundled.js"
	pageJS      = "family.js"
	pageCSS     = "family.css"
)

// Handler serves the page at /family/{wid} and its files at /family/assets/.
type Handler struct {
	// Endpoint is the GraphQL endpoint the page queries, on the page's own origin.
	Endpoint string
	// IDE is the address of the GraphQL IDE, to link to with the page's query; empty links to
	// none.
	IDE string
	mux *http.ServeMux
}

// New returns the handler of the family page.
func New(endpoint, ide string) *Handler {
	h := &Handler{Endpoint: endpoint, IDE: ide, mux: http.NewServeMux()}
	sub, _ := fs.Sub(assets, "assets") // embedded, so it exists
	files := http.StripPrefix("/family/assets/", http.FileServerFS(sub))
	h.mux.Handle("GET /family/assets/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/family/assets/"+pageJS || r.URL.Path == "/family/assets/"+pageCSS {
			// Not versioned by name: revalidated each time, so a new gateway's page is used at once.
			w.Header().Set("Cache-Control", "no-cache")
		} else {
			w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		}
		w.Header().Set("X-Content-Type-Options", "nosniff")
		files.ServeHTTP(w, r)
	}))
	h.mux.HandleFunc("GET /family/{wid}", h.page)
	return h
}

// ServeHTTP serves the page and its files.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// validWID is what a wid may be: the page refuses anything else rather than draw nothing.
var validWID = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,128}$`)

// page is the HTML of the family page. The only thing of the request it holds is the wid, which
// the template escapes; the page asks for everything else itself.
func (h *Handler) page(w http.ResponseWriter, r *http.Request) {
	wid := r.PathValue("wid")
	if !validWID.MatchString(wid) {
		http.Error(w, "Not a top account's wid: letters, digits, and . _ : - only, at most 128", http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "no-referrer")
	// Framed by the gateway's own IDE (its Family tab) and by no other page; X-Frame-Options
	// says so to browsers that predate frame-ancestors.
	w.Header().Set("X-Frame-Options", "SAMEORIGIN")
	// Nothing but this origin: the page's scripts, its GraphQL endpoint, and images it makes.
	// Cytoscape sets element styles from script, which style-src must allow.
	w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "+
		"connect-src 'self'; img-src 'self' data: blob:; base-uri 'none'; form-action 'none'; frame-ancestors 'self'")
	_ = pageTemplate.Execute(w, struct {
		WID, Endpoint, IDE string
		Scripts            []asset
		CSS                asset
	}{
		WID: wid, Endpoint: h.Endpoint, IDE: h.IDE,
		Scripts: []asset{assetOf(cytoscapeJS), assetOf(elkJS), assetOf(pageJS)},
		CSS:     assetOf(pageCSS),
	}) // the client went away: nothing to tell it
}

// asset is a file the page loads, with its subresource integrity.
type asset struct{ URL, SRI string }

func assetOf(name string) asset {
	data, _ := assets.ReadFile("assets/" + name) // embedded, so it exists
	sum := sha256.Sum256(data)
	return asset{URL: "/family/assets/" + name, SRI: "sha256-" + base64.StdEncoding.EncodeToString(sum[:])}
}

var pageTemplate = template.Must(template.New("family").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Family {{.WID}} · Advisor GraphQL gateway</title>
  <link rel="icon" href="data:,">
  <link rel="stylesheet" href="{{.CSS.URL}}" integrity="{{.CSS.SRI}}">
</head>
<body>
  <main id="family" data-wid="{{.WID}}" data-endpoint="{{.Endpoint}}" data-ide="{{.IDE}}">
    <header>
      <h1><span id="family-name">Family</span> <small>{{.WID}}</small></h1>
      <p id="status" role="status" aria-live="polite">Loading the family…</p>
    </header>
    <nav class="toolbar" aria-label="Graph controls">
      <fieldset id="type-filter"><legend>Cards</legend></fieldset>
      <fieldset id="role-filter"><legend>Relationships</legend></fieldset>
      <div class="buttons">
        <button type="button" id="fit">Fit</button>
        <button type="button" id="zoom-in" aria-label="Zoom in">+</button>
        <button type="button" id="zoom-out" aria-label="Zoom out">−</button>
        <button type="button" id="refresh">Refresh</button>
        <button type="button" id="expand-all" hidden>Show every card</button>
        <button type="button" id="group" hidden>Group by type</button>
        <button type="button" id="download-svg">Download SVG</button>
        <button type="button" id="download-png">Download PNG</button>
        <a id="ide-link" hidden>Open the query in the IDE</a>
      </div>
    </nav>
    <div class="panes">
      <section id="graph" tabindex="0" role="application"
        aria-label="The family graph. Arrow keys move between cards, Enter shows the card; the same edges are in the table below."></section>
      <aside>
        <section id="details" aria-live="polite"><h2>Card</h2><p>Select a card to see its fields.</p></section>
        <section><h2>Live events</h2><ol id="events" aria-live="polite"></ol></section>
      </aside>
    </div>
    <details id="text-alternative" open>
      <summary>The family as a table</summary>
      <table id="edges"><caption>Relationships</caption>
        <thead><tr><th scope="col">From</th><th scope="col">Relationship</th><th scope="col">Share</th><th scope="col">To</th></tr></thead>
        <tbody></tbody>
      </table>
    </details>
  </main>
  {{range .Scripts}}<script src="{{.URL}}" integrity="{{.SRI}}"></script>
  {{end}}
</body>
</html>
`))

package httpserver

import (
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"io/fs"
	"net/http"

	"github.com/99designs/gqlgen/graphql/playground"
)

// The IDE's scripts and styles are served from the binary: the same files gqlgen's GraphiQL
// page would fetch from a CDN (npm's graphiql 4.1.2, react and react-dom 18.2.0,
// @graphiql/plugin-explorer 4.0.6; licences in ide/LICENSES.txt), so the IDE works where a
// CDN is blocked or unreachable. The names carry the versions, so they can be cached forever.
//
//go:embed ide/*.js ide/*.css
var ideFiles embed.FS

const (
	ideJS          = "graphiql-4.1.2.min.js"
	ideCSS         = "graphiql-4.1.2.min.css"
	ideReact       = "react-18.2.0.production.min.js"
	ideReactDOM    = "react-dom-18.2.0.production.min.js"
	ideExplorerJS  = "plugin-explorer-4.0.6.umd.js"
	ideExplorerCSS = "plugin-explorer-4.0.6.css"
)

// idePage is the GraphiQL page for endpoint, loading its files from /ide/ with subresource
// integrity computed from the embedded files themselves.
func idePage(title, endpoint string) http.Handler {
	url := func(name string) string { return "/ide/" + name }
	return playground.Handler(title, endpoint,
		playground.WithGraphiqlVersion(url(ideJS), url(ideCSS), integrity(ideJS), integrity(ideCSS)),
		playground.WithGraphiqlReactVersion(url(ideReact), url(ideReactDOM), integrity(ideReact), integrity(ideReactDOM)),
		playground.WithGraphiqlPluginExplorerVersion(url(ideExplorerJS), url(ideExplorerCSS), integrity(ideExplorerJS), integrity(ideExplorerCSS)),
		playground.WithGraphiqlEnablePluginExplorer(true),
		// The query, variables and operation name live in the address, so an IDE link can be
		// shared and opens on the same query.
		playground.WithGraphiqlPersistStateInURL(true),
	)
}

// ideAssets serves the IDE's files under /ide/.
func ideAssets() http.Handler {
	sub, _ := fs.Sub(ideFiles, "ide") // the directory is embedded, so it exists
	files := http.StripPrefix("/ide/", http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		files.ServeHTTP(w, r)
	})
}

func integrity(name string) string {
	data, err := ideFiles.ReadFile("ide/" + name)
	if err != nil {
		panic("httpserver: the IDE file " + name + " is not embedded") // a build mistake, caught by any test
	}
	sum := sha256.Sum256(data)
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}

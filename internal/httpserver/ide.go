package httpserver

import (
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"html/template"
	"io/fs"
	"net/http"
)

// The IDE's scripts and styles are served from the binary: the same files gqlgen's GraphiQL
// page would fetch from a CDN (npm's graphiql 4.1.2, react and react-dom 18.2.0,
// @graphiql/plugin-explorer 4.0.6; licences in ide/LICENSES.txt), so the IDE works where a
// CDN is blocked or unreachable. The names carry the versions, so they can be cached forever;
// the favicon's address carries its hash instead.
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
)

// ideAsset is one file the page loads, with its subresource integrity.
type ideAsset struct {
	URL, SRI string
}

func asset(name string) ideAsset { return ideAsset{URL: "/ide/" + name, SRI: integrity(name)} }

// idePage is the GraphiQL page for endpoint, loading its files from /ide/ with subresource
// integrity computed from the embedded files themselves. A first visit, and every new tab,
// opens on the README's family query; the query, variables, headers and operation name then
// live in the address, so an IDE link can be shared and opens on the same query.
//
// The page is gqlgen's GraphiQL page (playground.Handler) with a favicon and a default query,
// which gqlgen's options cannot add.
func idePage(title, endpoint string) http.Handler {
	data := struct {
		Title, Endpoint, DefaultQuery string
		IDEHeader                     string
		Favicon                       string
		React, ReactDOM, JS, CSS      ideAsset
		ExplorerJS, ExplorerCSS       ideAsset
	}{
		Title: title, Endpoint: endpoint, DefaultQuery: familyQuery, IDEHeader: IDEHeader,
		Favicon: "/ide/" + ideFavicon + "?v=" + version(ideFavicon),
		React:   asset(ideReact), ReactDOM: asset(ideReactDOM), JS: asset(ideJS), CSS: asset(ideCSS),
		ExplorerJS: asset(ideExplorerJS), ExplorerCSS: asset(ideExplorerCSS),
	}
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_ = idePageTemplate.Execute(w, data) // the data is fixed, so only a gone client fails it
	})
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
  <style>
    body { margin: 0; }
    #graphiql { height: 100vh; }
    .loading { height: 100%; display: flex; align-items: center; justify-content: center; font-size: 4rem; }
    .family-tab select { max-width: 100%; margin: 0.3rem 0; }
    .family-frame { width: 100%; height: 75vh; border: 1px solid #ccc; margin-top: 0.3rem; }
  </style>
  <script src="{{.React.URL}}" integrity="{{.React.SRI}}" crossorigin="anonymous"></script>
  <script src="{{.ReactDOM.URL}}" integrity="{{.ReactDOM.SRI}}" crossorigin="anonymous"></script>
  <link rel="stylesheet" href="{{.CSS.URL}}" integrity="{{.CSS.SRI}}" crossorigin="anonymous">
  <link rel="stylesheet" href="{{.ExplorerCSS.URL}}" integrity="{{.ExplorerCSS.SRI}}" crossorigin="anonymous">
</head>
<body>
  <div id="graphiql"><div class="loading">Loading…</div></div>
  <script src="{{.JS.URL}}" integrity="{{.JS.SRI}}" crossorigin="anonymous"></script>
  <script src="{{.ExplorerJS.URL}}" integrity="{{.ExplorerJS.SRI}}" crossorigin="anonymous"></script>
  <script>
    const url = location.protocol + '//' + location.host + {{.Endpoint}};
    const subscriptionUrl = (location.protocol === 'https:' ? 'wss:' : 'ws:') + '//' + location.host + {{.Endpoint}};

    // The query, variables, headers and operation name live in the address.
    const parameters = Object.fromEntries(new URLSearchParams(location.search));
    const edited = new Set(); // what re-renders when the query or variables change
    function edit(key) {
      return (value) => {
        parameters[key] = value;
        const search = new URLSearchParams();
        for (const [k, v] of Object.entries(parameters)) {
          if (v) search.set(k, v);
        }
        history.replaceState(null, '', '?' + search.toString());
        edited.forEach((f) => f());
      };
    }

    // The Family tab: the family page of the top account whose wid the query or its variables
    // name, or of one picked from the list.
    const h = React.createElement;
    function namedWID() {
      try {
        const vars = JSON.parse(parameters.variables || '{}');
        if (typeof vars.wid === 'string' && vars.wid) return vars.wid;
      } catch {}
      const m = /\bwid\s*:\s*"([^"]+)"/.exec(parameters.query || '');
      return m ? m[1] : '';
    }
    function FamilyTab() {
      const [, rerender] = React.useState(0);
      React.useEffect(() => {
        const f = () => rerender((n) => n + 1);
        edited.add(f);
        return () => edited.delete(f);
      }, []);
      const [picked, setPicked] = React.useState('');
      const [accounts, setAccounts] = React.useState([]);
      React.useEffect(() => {
        let stored = {};
        try { stored = JSON.parse(localStorage.getItem('graphiql:headers') || '{}') || {}; } catch {}
        fetch(url, {
          method: 'POST',
          headers: { ...stored, 'Content-Type': 'application/json' },
          body: JSON.stringify({ query: '{ topAccounts(limit: 100) { nodes { wid name } } }' }),
        }).then((r) => r.json()).then((b) => setAccounts(b.data?.topAccounts?.nodes ?? [])).catch(() => {});
      }, []);
      const wid = picked || namedWID();
      return h('div', { className: 'family-tab' },
        h('label', null, 'Top account ',
          h('select', { value: wid, onChange: (e) => setPicked(e.target.value), 'aria-label': 'Top account' },
            h('option', { value: '' }, wid && !accounts.some((a) => a.wid === wid) ? wid : '(the one the query names)'),
            accounts.map((a) => h('option', { key: a.wid, value: a.wid }, a.name)))),
        wid
          ? h('div', null,
            h('a', { href: '/family/' + encodeURIComponent(wid), target: '_blank', rel: 'noopener' }, 'Open on its own page'),
            h('iframe', { src: '/family/' + encodeURIComponent(wid), title: 'The family graph', className: 'family-frame' }))
          : h('p', null, 'Name a wid in the query or its variables, or pick a top account.'));
    }

    ReactDOM.render(
      React.createElement(GraphiQL, {
        // The header tells a development gateway that runs trusted documents only that this
        // is its IDE (see FromIDE); WebSockets carry it in connection_init.
        fetcher: GraphiQL.createFetcher({
          url, subscriptionUrl,
          headers: { {{.IDEHeader}}: '1' },
          wsConnectionParams: { {{.IDEHeader}}: '1' },
        }),
        // What a first visit and every new tab open on; a query in the address wins.
        defaultQuery: {{.DefaultQuery}},
        query: parameters.query,
        variables: parameters.variables,
        headers: parameters.headers,
        operationName: parameters.operationName,
        onEditQuery: edit('query'),
        onEditVariables: edit('variables'),
        onEditHeaders: edit('headers'),
        onEditOperationName: edit('operationName'),
        isHeadersEditorEnabled: true,
        shouldPersistHeaders: true,
        plugins: [GraphiQLPluginExplorer.explorerPlugin(), {
          title: 'Family',
          icon: () => h('svg', { viewBox: '0 0 24 24', width: 20, height: 20, 'aria-hidden': true },
            h('path', { d: 'M12 3v5M12 8l-6 6M12 8l6 6', stroke: 'currentColor', fill: 'none', strokeWidth: 1.5 }),
            h('circle', { cx: 12, cy: 4, r: 2, fill: 'currentColor' }), h('circle', { cx: 6, cy: 17, r: 2.5, fill: 'currentColor' }),
            h('circle', { cx: 18, cy: 17, r: 2.5, fill: 'currentColor' })),
          content: FamilyTab,
        }],
        inputValueDeprecation: true,
      }),
      document.getElementById('graphiql'),
    );
  </script>
</body>
</html>
`))

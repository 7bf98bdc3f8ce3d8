// Package assistantpage serves the pop-out chat assistant: the page at /assistant that loads
// the Advisor chat SDK from its embed host and passes it session tokens fetched from the
// gateway's createAssistantSession mutation, the script /assistant/open.js that opens it docked
// to the opener, and a demo page at /assistant/demo.
//
// The pages carry no inline script, so their Content-Security-Policy can allow scripts and
// frames from the embed host and nowhere else.
package assistantpage

import (
	"embed"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"
)

//go:embed static/*.js static/*.css
var static embed.FS

// SDKPath is where the embed host serves the chat SDK.
const SDKPath = "/v1/sdk/assistant-sdk.js"

// Handler serves GET /assistant, /assistant/demo and the files under /assistant/.
type Handler struct {
	sdkURL string
	csp    string
}

// New returns the handler for the embed host at embedURL, such as https://embed.advisor.example.
func New(embedURL string) (*Handler, error) {
	u, err := url.Parse(embedURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("assistant embed URL %q must be an absolute http or https URL", embedURL)
	}
	return &Handler{
		sdkURL: strings.TrimSuffix(embedURL, "/") + SDKPath,
		csp:    CSP(u.Scheme + "://" + u.Host),
	}, nil
}

// SameOrigin returns the handler for an embed host served at path on the page's own origin,
// such as /sandbox (the embedded sandbox a gateway serves there). The page then names no host
// at all, so it works whatever host and port the browser reached it by, a published port of a
// container included.
func SameOrigin(path string) *Handler {
	return &Handler{sdkURL: strings.TrimSuffix(path, "/") + SDKPath, csp: CSP("'self'")}
}

// CSP is the pop-out page's Content-Security-Policy for the embed host's origin ('self' when
// it is the page's own): its own scripts and the SDK, the chat's frame, calls to its own
// /graphql, and nothing broader.
func CSP(embedOrigin string) string {
	scripts := "'self' " + embedOrigin
	if embedOrigin == "'self'" {
		scripts = embedOrigin
	}
	return "default-src 'none'; script-src " + scripts + "; frame-src " + embedOrigin +
		"; connect-src 'self'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
}

// demoCSP is the demo page's policy: its own scripts only, and no page may frame it.
const demoCSP = "default-src 'none'; script-src 'self'; style-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	switch name := strings.TrimPrefix(r.URL.Path, "/assistant/"); {
	case r.URL.Path == "/assistant":
		// The embed host learns the pop-out's origin, which its allow-list is about (the SDK's
		// rule 6), and nothing more: the page's address holds no token (rule 7).
		page(w, h.csp, "strict-origin-when-cross-origin", popoutPage, h.sdkURL)
	case name == "demo":
		page(w, demoCSP, "no-referrer", demoPage, nil)
	case !strings.Contains(name, "/") && name != "" && name != r.URL.Path:
		serveFile(w, name)
	default:
		http.NotFound(w, r)
	}
}

// page writes a page with its policy. Neither page may be framed (frame-ancestors 'none', and
// X-Frame-Options for browsers that predate it): a page that framed one could lure clicks
// onto it.
func page(w http.ResponseWriter, csp, referrer string, t *template.Template, data any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", csp)
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Referrer-Policy", referrer)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-store")
	_ = t.Execute(w, data) // the data is fixed, so only a gone client fails it
}

func serveFile(w http.ResponseWriter, name string) {
	data, err := static.ReadFile("static/" + name)
	if err != nil {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	ct := "text/javascript; charset=utf-8"
	if strings.HasSuffix(name, ".css") {
		ct = "text/css; charset=utf-8"
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-cache")
	if name == "open.js" {
		// Included by the caller's pages, wherever they are served from.
		w.Header().Set("Cross-Origin-Resource-Policy", "cross-origin")
	}
	_, _ = w.Write(data)
}

// popoutPage: the queue stub goes before the SDK's tag, which loads asynchronously; page.js
// drives the SDK. The container and each of its ancestors up to html have a real height. The
// chat "draws no title bar" (the SDK's rule 7), so the page titles and greets; until the chat
// says ready, a line says it is on its way rather than leave the window blank.
var popoutPage = template.Must(template.New("popout").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Advisor assistant</title>
  <link rel="stylesheet" href="/assistant/assistant.css">
  <script src="/assistant/queue.js"></script>
  <script async src="{{.}}"></script>
  <script defer src="/assistant/page.js"></script>
</head>
<body class="popout">
  <header>
    <h1>Advisor assistant</h1>
    <p id="assistant-greeting">Hello! Ask about your clients, their families and their documents.</p>
  </header>
  <p id="assistant-waiting" role="status">Connecting to the assistant…</p>
  <div id="assistant-notices" role="status" aria-live="polite"></div>
  <div id="assistant-chat"></div>
</body>
</html>
`))

var demoPage = template.Must(template.New("demo").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Advisor assistant demo</title>
  <link rel="stylesheet" href="/assistant/assistant.css">
  <script src="/assistant/open.js"></script>
  <script defer src="/assistant/demo.js"></script>
</head>
<body class="demo">
  <h1>Advisor assistant</h1>
  <p>The assistant opens in its own window, docked to the bottom right of this one.</p>
  <button id="open-assistant" type="button">Open the assistant</button>
</body>
</html>
`))

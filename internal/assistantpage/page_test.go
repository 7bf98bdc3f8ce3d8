package assistantpage_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/advisorhq/gateway/internal/assistantpage"
)

func serve(t *testing.T, embedURL string) *httptest.Server {
	t.Helper()
	h, err := assistantpage.New(embedURL)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, url string) (*http.Response, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(body)
}

// The pop-out page allows the embed host in script-src and frame-src and nothing broader:
// the policy is compared whole, so any widening shows in review.
func TestPopoutCSPIsExact(t *testing.T) {
	srv := serve(t, "https://embed.advisor.example:8443/some/path/")
	resp, page := get(t, srv.URL+"/assistant")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("GET /assistant = %d %s, want 200 text/html", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	want := "default-src 'none'; script-src 'self' https://embed.advisor.example:8443; frame-src https://embed.advisor.example:8443; " +
		"connect-src 'self'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
	if got := resp.Header.Get("Content-Security-Policy"); got != want {
		t.Errorf("Content-Security-Policy\n got: %s\nwant: %s", got, want)
	}
	if got := assistantpage.CSP("https://embed.advisor.example:8443"); got != want {
		t.Errorf("CSP() = %s, want the header's policy", got)
	}
	// The stub first, then the SDK loaded asynchronously, then the page's own script; no
	// inline script, which the policy would refuse.
	stub := strings.Index(page, `<script src="/assistant/queue.js"></script>`)
	sdk := strings.Index(page, `<script async src="https://embed.advisor.example:8443/some/path/v1/sdk/assistant-sdk.js"></script>`)
	own := strings.Index(page, `<script defer src="/assistant/page.js"></script>`)
	if stub < 0 || sdk < 0 || own < 0 || !(stub < sdk && sdk < own) {
		t.Errorf("the page's scripts are not the stub, the async SDK and page.js in that order:\n%s", page)
	}
	if strings.Count(page, "<script") != 3 {
		t.Errorf("the page has %d scripts, want 3 (no inline script)", strings.Count(page, "<script"))
	}
	if !strings.Contains(page, `<div id="assistant-chat"></div>`) {
		t.Error("the page has no #assistant-chat container")
	}
}

func TestPopoutFilesAndRoutes(t *testing.T) {
	srv := serve(t, "http://127.0.0.1:9090")
	for _, tc := range []struct {
		path, contentType, contains string
	}{
		{"/assistant/open.js", "text/javascript; charset=utf-8", "'assistant-popout'"},
		{"/assistant/queue.js", "text/javascript; charset=utf-8", "a.v = '1.0.0'"},
		{"/assistant/page.js", "text/javascript; charset=utf-8", "createAssistantSession"},
		{"/assistant/assistant.css", "text/css; charset=utf-8", "#assistant-chat"},
		{"/assistant/demo", "text/html; charset=utf-8", `<script src="/assistant/open.js"></script>`},
	} {
		resp, body := get(t, srv.URL+tc.path)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != tc.contentType || !strings.Contains(body, tc.contains) {
			t.Errorf("GET %s = %d %s, want 200 %s containing %q", tc.path, resp.StatusCode, resp.Header.Get("Content-Type"), tc.contentType, tc.contains)
		}
	}
	if resp, _ := get(t, srv.URL+"/assistant/demo"); resp.Header.Get("Content-Security-Policy") == "" {
		t.Error("the demo page has no Content-Security-Policy")
	}
	for _, path := range []string{"/assistant/nothing.js", "/assistant/", "/assistant/static/page.js", "/assistant/../go.mod"} {
		if resp, _ := get(t, srv.URL+path); resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s = %d, want 404", path, resp.StatusCode)
		}
	}
	resp, err := http.Post(srv.URL+"/assistant", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /assistant = %d, want 405", resp.StatusCode)
	}
}

func TestNewRefusesABadEmbedURL(t *testing.T) {
	for _, bad := range []string{"", "embed.example", "ftp://embed.example", "/v1"} {
		if _, err := assistantpage.New(bad); err == nil {
			t.Errorf("New(%q) accepted it, want an error", bad)
		}
	}
}

// Neither page may be framed by another, and the demo page sends no Referer; the pop-out sends
// the embed host its origin only, which the host's allow-list is about.
func TestPagesCannotBeFramed(t *testing.T) {
	srv := serve(t, "https://embed.advisor.example")
	for _, tc := range []struct {
		path, referrer string
	}{
		{"/assistant", "strict-origin-when-cross-origin"},
		{"/assistant/demo", "no-referrer"},
	} {
		resp, _ := get(t, srv.URL+tc.path)
		h := resp.Header
		if h.Get("X-Frame-Options") != "DENY" || !strings.Contains(h.Get("Content-Security-Policy"), "frame-ancestors 'none'") ||
			h.Get("Referrer-Policy") != tc.referrer || h.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: X-Frame-Options %q, policy %q, Referrer-Policy %q, X-Content-Type-Options %q; want DENY, frame-ancestors 'none', %s, nosniff",
				tc.path, h.Get("X-Frame-Options"), h.Get("Content-Security-Policy"), h.Get("Referrer-Policy"), h.Get("X-Content-Type-Options"), tc.referrer)
		}
	}
}

// Issue 26: "Every address a browser is given must be on the gateway's origin". With the embed
// host on the page's own origin (the gateway's embedded sandbox), the page names no host: the
// SDK's address is a path, and the policy allows the page's own origin and nothing else.
func TestASameOriginEmbedHostNamesNoHost(t *testing.T) {
	srv := httptest.NewServer(assistantpage.SameOrigin("/sandbox/"))
	t.Cleanup(srv.Close)
	resp, page := get(t, srv.URL+"/assistant")
	want := "default-src 'none'; script-src 'self'; frame-src 'self'; " +
		"connect-src 'self'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
	if got := resp.Header.Get("Content-Security-Policy"); got != want {
		t.Errorf("Content-Security-Policy\n got: %s\nwant: %s", got, want)
	}
	if !strings.Contains(page, `<script async src="/sandbox/v1/sdk/assistant-sdk.js"></script>`) {
		t.Errorf("the page does not load the SDK from /sandbox/v1/sdk/assistant-sdk.js:\n%s", page)
	}
	if strings.Contains(page, "http") {
		t.Errorf("the page names a host:\n%s", page)
	}
}

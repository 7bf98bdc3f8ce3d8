package httpserver

import (
	"context"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/advisorhq/gateway/graph"
	"github.com/advisorhq/gateway/graph/generated"
	"github.com/advisorhq/gateway/internal/metrics"
	"github.com/advisorhq/gateway/internal/testnpm"
)

// The IDE opens on the README's family query, from a copy go generate makes (the binary cannot
// embed the README): the copy must be the README's block, byte for byte.
func TestIDEDefaultQueryIsTheREADMEs(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)<!-- README example query.*?```graphql\n(.*?)```").FindSubmatch(readme)
	if block == nil {
		t.Fatal("README.md has no example query block")
	}
	if familyQuery != string(block[1]) {
		t.Errorf("the IDE's default query differs from the README's example query; run go generate ./internal/httpserver\n got: %q\nwant: %q", familyQuery, block[1])
	}
}

// The page is titled for the product, links its favicon, opens on the family query and loads
// every file from the gateway, with integrity, so it works offline.
func TestIDEPage(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("GET /{$}", idePage("Advisor GraphQL gateway", "/graphql"))
	mux.Handle("GET /ide/", ideAssets())
	srv := httptest.NewServer(mux)
	defer srv.Close()

	status, header, page := get(t, srv.URL+"/")
	if status != http.StatusOK || header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("GET / = %d %s, want 200 text/html; charset=utf-8", status, header.Get("Content-Type"))
	}
	if !strings.Contains(page, "<title>Advisor GraphQL gateway</title>") {
		t.Error("the page is not titled Advisor GraphQL gateway")
	}
	if q := regexp.MustCompile(`data-default-query="([^"]*)"`).FindStringSubmatch(page); q == nil || html.UnescapeString(q[1]) != familyQuery {
		t.Error("the page does not open on the README's family query")
	}
	icon := regexp.MustCompile(`<link rel="icon" type="image/svg\+xml" href="(/ide/favicon\.svg\?v=[0-9a-f]{12})">`).FindStringSubmatch(page)
	if icon == nil {
		t.Fatal("the page links no SVG favicon")
	}
	srcs := regexp.MustCompile(`(?:src|href)="(/[^"]+)"(?: integrity="([^"]+)")?`).FindAllStringSubmatch(page, -1)
	if len(srcs) != 9 {
		t.Errorf("the page loads %d files, want 9 (react, react-dom, GraphiQL's, the explorer's and the page's own scripts and styles, the favicon)", len(srcs))
	}
	for _, s := range srcs {
		status, header, body := get(t, srv.URL+s[1])
		if status != http.StatusOK || body == "" {
			t.Errorf("GET %s = %d, want 200 with a body", s[1], status)
		}
		if got := header.Get("Cache-Control"); got != "public, max-age=31536000, immutable" {
			t.Errorf("GET %s: Cache-Control %q, want it cached forever (its address names its content)", s[1], got)
		}
		if s[1] != icon[1] && s[2] == "" {
			t.Errorf("%s is loaded without integrity", s[1])
		}
	}
	if _, header, _ := get(t, srv.URL+icon[1]); header.Get("Content-Type") != "image/svg+xml" {
		t.Errorf("the favicon is served as %q, want image/svg+xml", header.Get("Content-Type"))
	}
}

func get(t *testing.T, url string) (int, http.Header, string) {
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
	return resp.StatusCode, resp.Header, string(body)
}

// The IDE's page runs no inline script, may be framed by no page, and sends no Referer. The
// policy is compared whole, so any widening shows in review; a Host that is no host name
// cannot write into it.
func TestIDEPageHasAStrictPolicyAndCannotBeFramed(t *testing.T) {
	srv := httptest.NewServer(idePage("Advisor GraphQL gateway", "/graphql"))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	status, header, page := get(t, srv.URL+"/")
	if status != http.StatusOK {
		t.Fatalf("GET / = %d", status)
	}
	for name, want := range map[string]string{
		"Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self' data:; " +
			"connect-src 'self' ws://" + host + " wss://" + host + "; frame-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
		"X-Frame-Options":        "DENY",
		"Referrer-Policy":        "no-referrer",
		"X-Content-Type-Options": "nosniff",
	} {
		if got := header.Get(name); got != want {
			t.Errorf("%s\n got: %s\nwant: %s", name, got, want)
		}
	}
	if n, withSrc := strings.Count(page, "<script"), len(regexp.MustCompile(`<script src="[^"]+"`).FindAllString(page, -1)); n != withSrc || n == 0 {
		t.Errorf("the page has %d scripts, %d of them files: want every one a file (no inline script)", n, withSrc)
	}
	for _, bad := range []string{"evil.example; script-src *", "evil.example wss://elsewhere", "a\tb"} {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.Host = bad
		rec := httptest.NewRecorder()
		idePage("t", "/graphql").ServeHTTP(rec, req)
		if got := rec.Header().Get("Content-Security-Policy"); strings.Contains(got, "evil") || strings.Contains(got, "elsewhere") ||
			!strings.Contains(got, "connect-src 'self'; ") {
			t.Errorf("Host %q: policy %s, want connect-src 'self' alone", bad, got)
		}
	}
}

// cspResult is what testdata/ide/csp.mjs saw.
type cspResult struct {
	PageHeaders    map[string]string
	Opened, Edited string
	Sent           []map[string]string
	Stored         string
	Violations     []string
	Errors         []string
}

// Issue 23: the IDE wrote its headers, Authorization among them, into the page's address, where
// they reach history, logs and Referer. Headers now stay in the browser's storage; a link that
// carries headers has its credentials dropped (it could plant another caller's token) and is
// taken out of the address at once; and all of it works in Chromium under the page's policy.
func TestTheIDEKeepsCredentialsOutOfItsAddressUnderItsPolicy(t *testing.T) {
	browser := testnpm.Chromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	if err := testnpm.Install(ctx, filepath.Join("testdata", "ide"), "playwright-core"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(New(Deps{
		Log:     slog.New(slog.DiscardHandler),
		Schema:  generated.NewExecutableSchema(generated.Config{Resolvers: &graph.Resolver{}}),
		Metrics: metrics.New(),
		Config:  Config{Transport: testTransport(), IDE: true},
	}))
	defer srv.Close()
	run, stop := context.WithTimeout(context.Background(), time.Minute)
	defer stop()
	cmd := exec.CommandContext(run, "node", filepath.Join("testdata", "ide", "csp.mjs"), srv.URL)
	cmd.Env = append(os.Environ(), "CHROMIUM="+browser)
	var got cspResult
	testnpm.RunJSON(t, cmd, &got)

	if len(got.Violations) > 0 || len(got.Errors) > 0 {
		t.Errorf("under its policy the page had violations %q and errors %q", got.Violations, got.Errors)
	}
	if got.PageHeaders["content-security-policy"] == "" || got.PageHeaders["x-frame-options"] != "DENY" {
		t.Errorf("the page came with %v, want its policy and X-Frame-Options: DENY", got.PageHeaders)
	}
	for what, address := range map[string]string{"as opened": got.Opened, "after editing": got.Edited} {
		if !strings.Contains(address, "query=") {
			t.Errorf("the address %s, %s, lost the query", what, address)
		}
		for _, secret := range []string{"headers", "Authorization", "token", "link-", "Cookie"} {
			if strings.Contains(address, secret) {
				t.Errorf("the address %s, %s, holds %q", what, address, secret)
			}
		}
	}
	var ops []map[string]string // the operations run, after the schema's introspection
	for _, r := range got.Sent {
		if !strings.Contains(r["body"], "IntrospectionQuery") {
			ops = append(ops, r)
		} else if r["authorization"] != "Bearer stored-token" {
			t.Errorf("the schema was asked for with Authorization %q, want the stored one", r["authorization"])
		}
	}
	if len(ops) != 2 {
		t.Fatalf("the IDE ran %d operations, want 2: %v", len(ops), got.Sent)
	}
	if ops[0]["authorization"] != "Bearer stored-token" || ops[0]["x-trace"] != "t1" || ops[0]["x-api-key"] != "" {
		t.Errorf("the first operation carried %v: want the stored Authorization and the link's X-Trace, not its credentials", ops[0])
	}
	if ops[1]["authorization"] != "Bearer typed-token" {
		t.Errorf("the second operation carried %v, want the Authorization typed into the editor", ops[1])
	}
	if !strings.Contains(got.Stored, "typed-token") {
		t.Errorf("the browser stored headers %q, want the typed ones kept there", got.Stored)
	}
}

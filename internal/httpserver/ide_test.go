package httpserver

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
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
	query, _ := json.Marshal(familyQuery) // html/template writes a JS string as JSON, / and < escaped
	if want := strings.NewReplacer("/", `\/`, "<", `\u003c`).Replace(string(query)); !strings.Contains(page, "defaultQuery: "+want) {
		t.Error("the page does not open on the README's family query")
	}
	icon := regexp.MustCompile(`<link rel="icon" type="image/svg\+xml" href="(/ide/favicon\.svg\?v=[0-9a-f]{12})">`).FindStringSubmatch(page)
	if icon == nil {
		t.Fatal("the page links no SVG favicon")
	}
	srcs := regexp.MustCompile(`(?:src|href)="(/[^"]+)"(?: integrity="([^"]+)")?`).FindAllStringSubmatch(page, -1)
	if len(srcs) != 7 {
		t.Errorf("the page loads %d files, want 7 (react, react-dom, GraphiQL and the explorer's scripts and styles, the favicon)", len(srcs))
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

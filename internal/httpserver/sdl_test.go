package httpserver

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/formatter"

	"github.com/advisorhq/gateway/graph"
	"github.com/advisorhq/gateway/graph/generated"
	"github.com/advisorhq/gateway/internal/metrics"
)

// The SDL is served where introspection is, and only then.
func TestSchemaSDL(t *testing.T) {
	schema := generated.NewExecutableSchema(generated.Config{Resolvers: &graph.Resolver{}})
	for _, introspection := range []bool{true, false} {
		srv := httptest.NewServer(New(Deps{
			Log: slog.New(slog.DiscardHandler), Schema: schema, Metrics: metrics.New(),
			Config: Config{Introspection: introspection, Transport: testTransport()},
		}))
		defer srv.Close()
		status, header, body := get(t, srv.URL+"/graphql/schema.graphql")
		if !introspection {
			if status != http.StatusNotFound {
				t.Errorf("introspection off: GET /graphql/schema.graphql = %d, want 404", status)
			}
			continue
		}
		if status != http.StatusOK || header.Get("Content-Type") != "text/plain; charset=utf-8" {
			t.Fatalf("GET /graphql/schema.graphql = %d %s, want 200 text/plain; charset=utf-8", status, header.Get("Content-Type"))
		}
		// It is the gateway's schema with, among its directives, the one introspection lists
		// beyond the specification's (@defer), and it loads back as what it says.
		var schemaOnly, deferOnly, reloaded bytes.Buffer
		formatter.NewFormatter(&schemaOnly).FormatSchema(schema.Schema())
		formatter.NewFormatter(&deferOnly, formatter.WithNonIntrospectionBuiltin()).FormatSchemaDocument(&ast.SchemaDocument{Directives: ast.DirectiveDefinitionList{schema.Schema().Directives["defer"]}})
		if strings.Count(body, deferOnly.String()) != 1 || strings.Replace(body, deferOnly.String(), "", 1) != schemaOnly.String() {
			t.Errorf("the SDL is not the gateway's schema with @defer's definition:\n%.300s", body)
		}
		parsed, err := gqlparser.LoadSchema(&ast.Source{Name: "schema.graphql", Input: body})
		if err != nil {
			t.Fatalf("the SDL does not load: %v", err)
		}
		formatter.NewFormatter(&reloaded).FormatSchema(parsed)
		if reloaded.String() != body {
			t.Error("the SDL, loaded and printed again, changes")
		}

		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/graphql/schema.graphql", nil)
		req.Header.Set("If-None-Match", header.Get("ETag"))
		// Each body is closed, or its connection's reader outlives the test (goleak).
		if status := statusOf(t, req); status != http.StatusNotModified {
			t.Errorf("GET with its ETag: got %d, want 304", status)
		}
		post, _ := http.NewRequest(http.MethodPost, srv.URL+"/graphql/schema.graphql", strings.NewReader(""))
		post.Header.Set("Content-Type", "text/plain")
		if status := statusOf(t, post); status != http.StatusMethodNotAllowed {
			t.Errorf("POST: got %d, want 405", status)
		}
	}
}

// statusOf sends req and returns the answer's status, having closed its body.
func statusOf(t *testing.T, req *http.Request) int {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

package httpserver

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"maps"
	"net/http"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/formatter"
)

// schemaSDL serves the schema as GraphQL SDL: the schema introspection describes, printed once,
// for tools that read a schema from a file or an address (graphql-codegen, editors, schema
// registries). The SDL tells no more than introspection does, so it is served only when
// introspection is on; otherwise the address answers 404, as if it did not exist.
func schemaSDL(schema graphql.ExecutableSchema, introspection bool) http.Handler {
	if !introspection {
		return http.NotFoundHandler()
	}
	sdl := printSchema(schema.Schema())
	sum := sha256.Sum256(sdl)
	etag := `"` + base64.RawURLEncoding.EncodeToString(sum[:16]) + `"`
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "The schema is read with GET", http.StatusMethodNotAllowed)
			return
		}
		// text/plain rather than application/graphql, which no registry defines: browsers show
		// it instead of downloading it, and SDL readers do not look at the type.
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("ETag", etag)
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(sdl))
	})
}

// specDirectives are the directives of the GraphQL specification, which every SDL reader knows
// without a definition.
var specDirectives = map[string]bool{"skip": true, "include": true, "deprecated": true, "specifiedBy": true, "oneOf": true}

// printSchema prints the schema without the built-in definitions every SDL reader has, except
// the built-in directives that are not the specification's (gqlgen's @defer): introspection
// lists them, so the SDL defines them too, and a tool reading either sees the same schema. They
// are printed among the schema's own directives, sorted as a reader prints them again, after
// the schema's `extend schema @link(...)` (the federation's, schema/federation.graphqls).
func printSchema(schema *ast.Schema) []byte {
	s := *schema
	s.Directives = maps.Clone(schema.Directives)
	for name, d := range schema.Directives {
		if d.Position != nil && d.Position.Src != nil && d.Position.Src.BuiltIn && !specDirectives[name] {
			own := *d
			own.Position = nil // what the formatter leaves out as built in
			s.Directives[name] = &own
		}
	}
	var b bytes.Buffer
	formatter.NewFormatter(&b).FormatSchema(&s)
	return b.Bytes()
}

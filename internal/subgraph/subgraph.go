// Package subgraph prints the schema the gateway serves as a subgraph of a federated graph
// (Apollo Federation v2): the SDL its `_service` field answers, which a federation's composer
// reads.
package subgraph

import (
	"bytes"
	"path/filepath"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/formatter"
)

// plumbing is the schema file that declares what the federation specification defines: the
// `@key` and `@link` directives, their scalars, `_Any`, `_Entity`, `_Service` and the fields
// `_entities` and `_service`. A composer knows them from the `@link` and adds them itself: the
// subgraph specification has a subgraph's SDL leave them out.
const plumbing = "federation.graphqls"

// SDL prints schema as a subgraph's SDL: every definition but the federation's own, with the
// `@key` directives the types carry and the `@link` that imports them.
func SDL(schema *ast.Schema) string {
	s := *schema
	s.Types = make(map[string]*ast.Definition, len(schema.Types))
	for name, d := range schema.Types {
		if fromPlumbing(d.Position) {
			continue
		}
		if d == schema.Query {
			q := *d
			q.Fields = nil
			for _, f := range d.Fields {
				if !fromPlumbing(f.Position) {
					q.Fields = append(q.Fields, f)
				}
			}
			d = &q
			s.Query = d
		}
		s.Types[name] = d
	}
	s.Directives = make(map[string]*ast.DirectiveDefinition, len(schema.Directives))
	for name, d := range schema.Directives {
		if !fromPlumbing(d.Position) {
			s.Directives[name] = d
		}
	}
	var b bytes.Buffer
	formatter.NewFormatter(&b).FormatSchema(&s)
	return b.String()
}

func fromPlumbing(p *ast.Position) bool {
	return p != nil && p.Src != nil && filepath.Base(p.Src.Name) == plumbing
}

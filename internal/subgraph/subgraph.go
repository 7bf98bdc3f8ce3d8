// Package subgraph prints the schema the gateway serves as a subgraph of a federated graph
// (Apollo Federation v2), the SDL its `_service` field answers, and gives the schema it serves
// when it is no subgraph: without any of the federation's definitions.
package subgraph

import (
	"bytes"
	"path/filepath"
	"slices"

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
	var b bytes.Buffer
	formatter.NewFormatter(&b).FormatSchema(without(schema, false))
	return b.String()
}

// Without is schema as a gateway that is no subgraph serves it: none of the federation's
// definitions, fields, `@link` or `@key`, so that introspection, validation and the SDL know
// nothing of federation, and client code generators meet no `_Any` to map.
func Without(schema *ast.Schema) *ast.Schema {
	return without(schema, true)
}

// without copies schema less the plumbing's definitions and fields; with applied, also less
// the directives the plumbing defines wherever they are applied.
func without(schema *ast.Schema, applied bool) *ast.Schema {
	s := *schema
	s.Types = make(map[string]*ast.Definition, len(schema.Types))
	for name, d := range schema.Types {
		if fromPlumbing(d.Position) {
			continue
		}
		if d == schema.Query {
			q := *d
			q.Fields = slices.DeleteFunc(slices.Clone(d.Fields), func(f *ast.FieldDefinition) bool { return fromPlumbing(f.Position) })
			d = &q
			s.Query = d
		}
		if applied && len(d.Directives) > 0 {
			c := *d
			c.Directives = appliedOutside(schema, d.Directives)
			d = &c
			if schema.Query != nil && name == schema.Query.Name {
				s.Query = d
			}
		}
		s.Types[name] = d
	}
	s.Directives = make(map[string]*ast.DirectiveDefinition, len(schema.Directives))
	for name, d := range schema.Directives {
		if !fromPlumbing(d.Position) {
			s.Directives[name] = d
		}
	}
	if applied {
		s.SchemaDirectives = appliedOutside(schema, schema.SchemaDirectives)
		s.PossibleTypes = make(map[string][]*ast.Definition, len(schema.PossibleTypes))
		for name, types := range schema.PossibleTypes {
			if _, ok := s.Types[name]; ok {
				s.PossibleTypes[name] = types
			}
		}
		s.Implements = make(map[string][]*ast.Definition, len(schema.Implements))
		for name, abstracts := range schema.Implements {
			s.Implements[name] = slices.DeleteFunc(slices.Clone(abstracts), func(d *ast.Definition) bool { return fromPlumbing(d.Position) })
		}
	}
	return &s
}

// appliedOutside is list less the directives the plumbing defines.
func appliedOutside(schema *ast.Schema, list ast.DirectiveList) ast.DirectiveList {
	return slices.DeleteFunc(slices.Clone(list), func(d *ast.Directive) bool {
		def := schema.Directives[d.Name]
		return def != nil && fromPlumbing(def.Position)
	})
}

func fromPlumbing(p *ast.Position) bool {
	return p != nil && p.Src != nil && filepath.Base(p.Src.Name) == plumbing
}

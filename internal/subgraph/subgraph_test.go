package subgraph

import (
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/formatter"
)

const own = `type Query { card(id: ID!): Card }
type Card @key(fields: "id") { id: ID! }
`

const fed = `extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
directive @link(url: String!, import: [link__Import]) repeatable on SCHEMA
directive @key(fields: federation__FieldSet!) repeatable on OBJECT | INTERFACE
scalar federation__FieldSet
scalar link__Import
scalar _Any
union _Entity = Card
type _Service { sdl: String! }
extend type Query { _entities(representations: [_Any!]!): [_Entity]! _service: _Service! }
`

func load(t *testing.T) *ast.Schema {
	t.Helper()
	s, err := gqlparser.LoadSchema(&ast.Source{Name: "schema/card.graphqls", Input: own}, &ast.Source{Name: "schema/federation.graphqls", Input: fed})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The subgraph specification: a subgraph's SDL has its @key directives and the @link that
// imports them, and none of what the federation defines (`_Any`, `_Entity`, `_Service`,
// `_entities`, `_service`, the directives' definitions), which the composer adds.
func TestSDLHasTheKeysAndTheLinkAndNoneOfTheFederationsOwn(t *testing.T) {
	sdl := SDL(load(t))
	for _, want := range []string{`extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])`, `type Card @key(fields: "id")`, "card(id: ID!): Card"} {
		if !strings.Contains(sdl, want) {
			t.Errorf("the SDL lacks %s:\n%s", want, sdl)
		}
	}
	for _, not := range []string{"_Any", "_Entity", "_Service", "_entities", "_service", "directive @", "federation__FieldSet", "link__Import"} {
		if strings.Contains(sdl, not) {
			t.Errorf("the SDL has %s:\n%s", not, sdl)
		}
	}
}

// A gateway that is no subgraph serves the schema as if federation.graphqls were not there.
func TestWithoutIsTheSchemaAsIfFederationWereNotThere(t *testing.T) {
	s := load(t)
	plain, err := gqlparser.LoadSchema(&ast.Source{Name: "schema/card.graphqls", Input: strings.Replace(own, ` @key(fields: "id")`, "", 1)})
	if err != nil {
		t.Fatal(err)
	}
	var got, want strings.Builder
	formatter.NewFormatter(&got).FormatSchema(Without(s))
	formatter.NewFormatter(&want).FormatSchema(plain)
	if got.String() != want.String() {
		t.Errorf("Without printed\n%s\nwant\n%s", got.String(), want.String())
	}
	if w := Without(s); len(w.Implements["Card"]) != 0 || w.PossibleTypes["_Entity"] != nil {
		t.Errorf("Card still implements %v; _Entity's possible types %v", w.Implements["Card"], w.PossibleTypes["_Entity"])
	}
	if s.Types["_Any"] == nil || len(s.Query.Fields) != len(Without(s).Query.Fields)+2 {
		t.Error("Without changed the schema it was given")
	}
}

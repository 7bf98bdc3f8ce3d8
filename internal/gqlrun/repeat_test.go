package gqlrun

import (
	"testing"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

// Objects are checked for an alias written twice only in operations that may select one twice:
// mayRepeat must say so of every operation where CollectFields keeps two fields of one alias
// apart, and may be wrong only the careful way.
func TestMayRepeatFindsAliasesCollectFieldsKeepsApart(t *testing.T) {
	t.Parallel()
	schema := gqlparser.MustLoadSchema(&ast.Source{Input: `
		type Query { contacts: [Contact!]! cards: [Card!]! named: [Named!]! }
		interface Card { id: ID! }
		interface Named { name: String! }
		type Person implements Card & Named { id: ID! name: String! }
		type Trust implements Card { id: ID! name: String! }
		type Will { id: ID! name: String! }
		union Contact = Person | Trust
		union Paper = Will`})
	for _, tc := range []struct {
		name, query string
		want        bool
	}{
		{"fields of one type", `{ contacts { ... on Person { id id } } }`, false},
		{"a field on an interface and on its implementor", `{ cards { id ... on Person { id } } }`, false},
		{"a field on two object types", `{ contacts { ... on Person { name } ... on Trust { name } } }`, false},
		{"__typename on a union and on its member", `{ contacts { __typename ... on Person { __typename } } }`, true},
		{"__typename on a union and on an interface of a member", `{ contacts { __typename ... on Card { __typename } } }`, true},
		{"a field on two interfaces one object implements", `{ cards { ... on Named { name: __typename } ... on Card { name: __typename } } }`, true},
		{"through a named fragment", `{ contacts { __typename ...P } } fragment P on Person { __typename }`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := gqlparser.LoadQuery(schema, tc.query)
			if err != nil {
				t.Fatal(err)
			}
			if got := mayRepeat(doc); got != tc.want {
				t.Errorf("mayRepeat(%s) = %v, want %v", tc.query, got, tc.want)
			}
		})
	}
}

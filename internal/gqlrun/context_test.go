package gqlrun

import (
	"context"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// fieldCtx answers for gqlgen's unexported field-context key (graphql.resolverCtx in gqlgen
// v0.17.95), which it learns from graphql.WithFieldContext. Should gqlgen keep field contexts
// some other way, graphql.GetFieldContext would silently find the parent's: errors would carry
// wrong paths and resolvers would see the wrong field. This test is where that shows.
func TestGqlgenReadsTheFieldContextsWeMake(t *testing.T) {
	t.Parallel()
	parent := &graphql.FieldContext{Object: "Contact", Field: graphql.CollectedField{Field: &ast.Field{Alias: "people"}}}
	ctx := graphql.WithFieldContext(context.Background(), parent)
	result := "the element"
	for _, tc := range []struct {
		name string
		make func() context.Context
		want graphql.FieldContext
		// index is the element's index, or -1 for a field.
		index int
	}{
		{
			name: "WithField",
			make: func() context.Context {
				return WithField(ctx, graphql.FieldContext{Object: "Person", IsMethod: true})
			},
			want:  graphql.FieldContext{Object: "Person", IsMethod: true, Parent: parent},
			index: -1,
		},
		{
			name: "Element.Context",
			make: func() context.Context {
				var e Element
				return e.Context(ctx, 2, &result)
			},
			want:  graphql.FieldContext{Parent: parent, Result: &result},
			index: 2,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := graphql.GetFieldContext(tc.make())
			if got == nil || got == parent || got.Object != tc.want.Object || got.IsMethod != tc.want.IsMethod ||
				got.Parent != tc.want.Parent || got.Result != tc.want.Result || index(got) != tc.index {
				t.Fatalf("graphql.GetFieldContext did not return the field context %s made "+
					"(got object %q, the parent's: %v): the gqlgen go.mod names no longer keeps field contexts as v0.17.95 "+
					"did, under its unexported key graphql.resolverCtx that graphql.WithFieldContext writes and "+
					"fieldCtx.Value answers for; make fieldCtx answer for gqlgen's new key, or have WithField and "+
					"Element.Context call graphql.WithFieldContext",
					tc.name, describe(got), got == parent)
			}
		})
	}
}

func index(fc *graphql.FieldContext) int {
	if fc.Index == nil {
		return -1
	}
	return *fc.Index
}

func describe(fc *graphql.FieldContext) string {
	if fc == nil {
		return "none"
	}
	return fc.Object
}

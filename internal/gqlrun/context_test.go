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
			name: "WithField under WithContexts",
			make: func() context.Context {
				return WithField(WithContexts(ctx), graphql.FieldContext{Object: "Person", IsMethod: true})
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

// A response's field contexts are allocated a chunk at a time once it has a Contexts, through
// elements of lists and fields of fields alike (issue 28: "at most 4,000 allocations per
// query", of which the family query's field contexts were nearly 3,000).
func TestFieldContextsOfAResponseAreAllocatedInChunks(t *testing.T) {
	parent := graphql.WithFieldContext(context.Background(), &graphql.FieldContext{Object: "TopAccount"})
	const fields = 1000
	for _, tc := range []struct {
		name string
		ctx  context.Context
		max  float64
	}{
		{"without Contexts, one a field", parent, fields},
		{"with Contexts, one a chunk", WithContexts(parent), 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			elements := make([]Element, fields)
			allocs := testing.AllocsPerRun(5, func() {
				ctx := tc.ctx
				for i := range fields {
					child := WithField(ctx, graphql.FieldContext{Object: "Contact"})
					if graphql.GetFieldContext(child).Object != "Contact" {
						t.Fatal("the field context made is not the one gqlgen finds")
					}
					ctx = elements[i].Context(child, i, nil)
				}
			})
			if allocs > tc.max {
				t.Errorf("%d fields made %.0f allocations, want at most %.0f", fields, allocs, tc.max)
			}
		})
	}
}

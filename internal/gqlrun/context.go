package gqlrun

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
)

// gqlgen keeps a field's context in a context.Context under a key of its own, so each field
// that has one costs two allocations: the graphql.FieldContext and the context that carries
// it. fieldCtx is both in one, and a list's elements have theirs in one allocation for the
// whole list. gqlgen reads them the only way it can, graphql.GetFieldContext, which asks
// Value for its key.
type fieldCtx struct {
	context.Context // the parent field's
	fc              graphql.FieldContext
}

// The key gqlgen keeps field contexts under is unexported (graphql.resolverCtx in v0.17.95):
// probe tells it by the answer it gets for it. gqlgen offers no public way to make a field
// context in one allocation; TestGqlgenReadsTheFieldContextsWeMake fails if a gqlgen upgrade
// stops reading the ones made here.
var (
	probeFC = &graphql.FieldContext{}
	probe   = graphql.WithFieldContext(context.Background(), probeFC)
)

func (c *fieldCtx) Value(key any) any {
	if probe.Value(key) == any(probeFC) {
		return &c.fc
	}
	return c.Context.Value(key)
}

// WithField is graphql.WithFieldContext(ctx, &fc) in one allocation.
func WithField(ctx context.Context, fc graphql.FieldContext) context.Context {
	c := &fieldCtx{Context: ctx, fc: fc}
	c.fc.Parent = graphql.GetFieldContext(ctx)
	return c
}

// Element is the context of one element of a list, as graphql.MarshalSliceConcurrently makes
// it; a list's elements are allocated together.
type Element struct {
	ctx   fieldCtx
	index int
}

// Context is ctx with the field context of element i, whose value is result.
func (e *Element) Context(ctx context.Context, i int, result any) context.Context {
	e.index = i
	e.ctx = fieldCtx{Context: ctx, fc: graphql.FieldContext{Index: &e.index, Result: result, Parent: graphql.GetFieldContext(ctx)}}
	return &e.ctx
}

package gqlrun

import (
	"context"
	"sync"

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
	// contexts is where the fields below this one take theirs from, if the response has a
	// Contexts (WithContexts).
	contexts *Contexts
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
	if _, ok := key.(contextsKey); ok && c.contexts != nil {
		return c.contexts
	}
	return c.Context.Value(key)
}

// WithField is graphql.WithFieldContext(ctx, &fc) in one allocation, or in none when the
// response has a Contexts.
func WithField(ctx context.Context, fc graphql.FieldContext) context.Context {
	if e, ok := ctx.(*Elided); ok {
		ctx = e.real() // the field's context may outlive the frames
	}
	contexts := contextsOf(ctx)
	var c *fieldCtx
	if contexts != nil {
		c = contexts.take()
	} else {
		c = &fieldCtx{}
	}
	*c = fieldCtx{Context: ctx, fc: fc, contexts: contexts}
	c.fc.Parent = graphql.GetFieldContext(ctx)
	return c
}

// Contexts allocates the field contexts of one response in chunks, growing from 8 to
// maxChunk: a family query makes nearly 3,000 of them, which all live until the response is
// written, so one allocation may as well hold many. It is safe for the goroutines of
// concurrent fields. A chunk lives as long as any context in it: give a Contexts to a response
// that ends (a query or mutation over HTTP), never to a subscription, whose idle socket would
// keep the rest of its last event's chunk and all that the contexts in it point to.
type Contexts struct {
	mu    sync.Mutex
	free  []fieldCtx
	chunk int
}

type contextsKey struct{}

// WithContexts has the field contexts of the response resolved within ctx allocated together.
func WithContexts(ctx context.Context) context.Context {
	return context.WithValue(ctx, contextsKey{}, &Contexts{})
}

// contextsOf is the Contexts of ctx: its parent field's, without a search, when it has one.
func contextsOf(ctx context.Context) *Contexts {
	if p, ok := ctx.(*fieldCtx); ok {
		return p.contexts
	}
	c, _ := ctx.Value(contextsKey{}).(*Contexts)
	return c
}

func (cs *Contexts) take() *fieldCtx {
	cs.mu.Lock()
	if len(cs.free) == 0 {
		cs.chunk = min(max(2*cs.chunk, 8), maxChunk)
		cs.free = make([]fieldCtx, cs.chunk)
	}
	c := &cs.free[0]
	if cs.free = cs.free[1:]; len(cs.free) == 0 {
		cs.free = nil
	}
	cs.mu.Unlock()
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
	e.ctx = fieldCtx{Context: ctx, fc: graphql.FieldContext{Index: &e.index, Result: result, Parent: graphql.GetFieldContext(ctx)},
		contexts: contextsOf(ctx)}
	return &e.ctx
}

package gqlrun

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
)

// A list whose elements reach no I/O (Lane.ReachesIO) is marshalled on one goroutine, and
// the field contexts of its elements and of the object-valued fields below them are read
// only when something goes wrong: an error's path, a panic, a client gone. A family query
// made nearly 3,000 of them at 200 contacts, 470 KB. Below such a list the executor keeps
// them in an Elided instead, one context for the whole list, whose stack of field contexts
// grows and shrinks as the fields are entered and left (Enter, Leave). Whoever asks it for
// its field context (graphql.GetFieldContext, so every error) gets the real chain, made
// then, exactly as the fields would have had it; the chain stays valid however the stack
// changes afterwards.
//
// An Elided is used by one goroutine at a time: nothing below such a list runs concurrently.
type Elided struct {
	context.Context // the list field's own
	contexts        *Contexts
	stack           []frame
	first           [4]frame // the stack's first frames, in the same allocation
}

type frame struct {
	fc    graphql.FieldContext
	index int  // an element's
	elem  bool // whether fc is an element's (Element), not a field's (WithField)
	// made is fc made a context, once asked for, with its parents.
	made context.Context
}

// Elide is the Elided the n elements of a list that reaches no I/O are marshalled in, and its
// depth there: ctx's own if ctx is one (a list within such a list), or a new one; nil when
// the list is empty.
func Elide(ctx context.Context, n int) (*Elided, int) {
	if e, ok := ctx.(*Elided); ok {
		return e, len(e.stack)
	}
	if n == 0 {
		return nil, 0
	}
	e := &Elided{Context: ctx, contexts: contextsOf(ctx)}
	e.stack = e.first[:0]
	return e, 0
}

// Element has e stand for the context of element i of the list at depth, whose value is
// result (Element.Context), and returns it.
func (e *Elided) Element(depth, i int, result any) context.Context {
	e.stack = append(e.stack[:depth], frame{fc: graphql.FieldContext{Result: result}, index: i, elem: true})
	return e
}

// Back drops the frames above depth: the list's are left, or a panic left them behind.
func (e *Elided) Back(depth int) {
	if e == nil || depth >= len(e.stack) {
		return
	}
	clear(e.stack[depth:])
	e.stack = e.stack[:depth]
}

// Enter is the context of an object-valued field answered from memory, whose context fc is:
// WithField's, or, below a list that reaches no I/O, ctx itself with fc on its stack until
// Leave.
func Enter(ctx context.Context, fc graphql.FieldContext) context.Context {
	if e, ok := ctx.(*Elided); ok {
		e.stack = append(e.stack, frame{fc: fc})
		return e
	}
	return WithField(ctx, fc)
}

// Leave says the field Enter gave ctx for is marshalled.
func Leave(ctx context.Context) {
	if e, ok := ctx.(*Elided); ok {
		e.Back(len(e.stack) - 1)
	}
}

// Real is ctx as a chain of field contexts gqlgen can read without the Elided, for what may
// keep it, or run concurrently, beyond the field it was given to.
func Real(ctx context.Context) context.Context {
	if e, ok := ctx.(*Elided); ok {
		return e.real()
	}
	return ctx
}

// real makes the frames not yet made into contexts, and returns the top one's.
func (e *Elided) real() context.Context {
	ctx := e.Context
	for i := range e.stack {
		f := &e.stack[i]
		if f.made == nil {
			if f.elem {
				f.made = (&Element{}).Context(ctx, f.index, f.fc.Result)
			} else {
				f.made = WithField(ctx, f.fc)
			}
		}
		ctx = f.made
	}
	return ctx
}

func (e *Elided) Value(key any) any {
	if probe.Value(key) == any(probeFC) {
		return graphql.GetFieldContext(e.real())
	}
	if _, ok := key.(contextsKey); ok && e.contexts != nil {
		return e.contexts
	}
	return e.Context.Value(key)
}

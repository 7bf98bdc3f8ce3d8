// Package gqlrun is what the executor internal/execgen generates calls at run time beyond
// gqlgen's own graphql package: a per-execution cache of collected fields and of which
// selections reach a field that does I/O, the guard that keeps a response within its limits
// for the fields no middleware sees, objects and field contexts a chunk at a time, and below a
// list that does no I/O, field contexts made only when something reads them (Elided).
package gqlrun

import (
	"context"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// Guard keeps a response within its limits for the fields the executor answers from memory.
// Those fields bypass gqlgen's field middleware, where the limits see the others.
type Guard interface {
	// Charge adds the bytes a field adds to the response.
	Charge(n int64)
	// Stopped is the error that ends the response once its context has ended, or
	// apperr.ErrReported when another field has said why.
	Stopped(ctx context.Context) error
}

type guardKey struct{}

// WithGuard has the executor keep the response resolved within ctx within g.
func WithGuard(ctx context.Context, g Guard) context.Context {
	return context.WithValue(ctx, guardKey{}, g)
}

// GuardOf is the guard WithGuard gave ctx, or nil.
func GuardOf(ctx context.Context) Guard {
	g, _ := ctx.Value(guardKey{}).(Guard)
	return g
}

// DoesIO reports whether a field of an object type does I/O: it is resolved by a resolver or
// by a method that takes a context. The generated executor provides it.
type DoesIO func(object, field string) bool

// State is what one execution keeps beside gqlgen's: it lives as long as the execution
// context, one operation's or one subscription's, and is shared by the goroutines of
// concurrent fields. What they do most, once or more per object (allocate its field set,
// charge its fields, look up its collected fields), each does on a Lane of its own, without
// locks or atomic operations: on two cores they were a tenth of a 200-contact family query.
type State struct {
	root Lane // the lane of the goroutine that runs the execution
	mu   sync.Mutex
	// idle are the lanes forked for concurrent fields and joined since, for the next forks;
	// a forked lane keeps the rest of its chunks, and End takes them back.
	idle []*Lane
	// deferred says a field was deferred: a part of the response is resolved after another is
	// written, so the chunks are not reused (End).
	deferred bool
	// Begin sets these for each response.
	guard        Guard
	placeholders bool
	// repeats says whether the operation may select an alias twice on one object (see
	// mayRepeat), of doc, the operation's document.
	repeats bool
	doc     *ast.QueryDocument
	// plans, when the execution has them (WithPlans), keep what Fields and ReachesIO work out
	// for later executions; fixed says whether Fields' may be kept (see Plans).
	plans   *Plans
	fixed   bool
	sizes   *memoSizes // of the document's plan, when it has one
	done    <-chan struct{}
	stopped atomic.Bool
	// size adds up the charges the lanes passed on, of which the guard has seen forwarded.
	size, forwarded atomic.Int64
}

// New is the lane of the goroutine that runs an execution, of a new State.
func New() *Lane {
	s := &State{}
	s.root.s = s
	return &s.root
}

// selection names a selection set as the type it selects on sees it. Selection sets are
// parts of the parsed operation, which outlives the execution, so their address names them.
type selection struct {
	first *ast.Selection
	n     int
	// on is the first implementor's name for Fields and the type's name for ReachesIO:
	// strings from the generated code, so their address is enough.
	on *byte
}

func key(sel ast.SelectionSet, on string) selection {
	return selection{first: unsafe.SliceData(sel), n: len(sel), on: unsafe.StringData(on)}
}

// Begin starts resolving one response within ctx. Responses of one execution come one after
// another (a subscription's events), never at once, each begun and ended on the root lane.
func (l *Lane) Begin(ctx context.Context) {
	s := l.s
	s.guard = GuardOf(ctx)
	s.placeholders, _ = ctx.Value(placeholdersKey{}).(bool)
	s.plans = plansOf(ctx)
	if !graphql.HasOperationContext(ctx) {
		s.repeats, s.doc, s.fixed, s.sizes = true, nil, false, nil
	} else if doc := graphql.GetOperationContext(ctx).Doc; doc != s.doc || doc == nil {
		if s.plans != nil && doc != nil {
			d := s.plans.doc(doc)
			s.repeats, s.fixed, s.sizes = d.repeats, d.fixed, d.sizes
			l.fields.reserve(int(d.sizes.fields.Load()))
			l.io.reserve(int(d.sizes.io.Load()))
		} else {
			s.repeats, s.fixed, s.sizes = doc == nil || mayRepeat(doc), false, nil
		}
		s.doc = doc
	}
	s.done = ctx.Done()
	s.stopped.Store(false)
	s.size.Store(0)
	s.forwarded.Store(0)
	l.size = 0
}

// chargeStep is how many bytes of charges a lane gathers before it passes them to the State
// and the guard: one call per field would cost more than the field, and a budget is megabytes.
const chargeStep = 32 << 10

// Charge adds n bytes to the response being resolved.
func (l *Lane) Charge(n int64) {
	if l.size += n; l.size >= chargeStep {
		l.flush()
	}
}

// flush passes the lane's charges to the State, and the guard those it has not seen.
func (l *Lane) flush() {
	s := l.s
	total := s.size.Add(l.size)
	l.size = 0
	if seen := s.forwarded.Swap(total); s.guard != nil && total > seen {
		s.guard.Charge(total - seen)
	}
}

// maxPresize bounds Size: the charges estimate, and a response larger than this is rare enough
// to grow as it is written.
const maxPresize = 32 << 20

// Size is about what the response will take written, from the charges of the fields resolved
// since Begin (the fields that go through the middleware are charged there, not here), so its
// buffer can be made once instead of doubling as it is written. The lanes forked for it have
// been joined, which passed their charges on.
func (l *Lane) Size() int {
	return int(min(max(l.s.size.Load()+l.size, 0), maxPresize))
}

// Stop reports whether the response's context has ended, its client gone or its budget
// spent; if so, the error that says why is added at ctx. Lists answered from memory ask
// before each element, so a small operation that would write a huge response stops soon.
func (l *Lane) Stop(ctx context.Context) bool {
	s := l.s
	select {
	case <-s.done:
	default:
		return false
	}
	err := context.Cause(ctx)
	if s.guard != nil {
		err = s.guard.Stopped(ctx)
	} else if s.stopped.Swap(true) {
		return true
	}
	graphql.AddError(ctx, err)
	return true
}

// Fields is graphql.CollectFields, remembered by selection set and type: an object's fields
// are collected once per execution and lane, not once per object of a list.
func (l *Lane) Fields(op *graphql.OperationContext, sel ast.SelectionSet, implementors []string) []graphql.CollectedField {
	k := key(sel, implementors[0])
	if fields, ok := l.fields.get(k); ok {
		return fields
	}
	s := l.s
	shared := s.plans != nil && s.fixed && op != nil && op.Doc == s.doc
	fields, ok := []graphql.CollectedField(nil), false
	if shared {
		fields, ok = s.plans.getFields(sel, implementors[0])
	}
	if !ok {
		fields = graphql.CollectFields(op, sel, implementors)
		if shared {
			s.plans.putFields(sel, implementors[0], fields)
		}
	}
	l.fields.put(k, fields)
	return fields
}

// ReachesIO reports whether selecting sel on objects of type typ (an object, interface or
// union) reaches a field that does I/O, or a deferred fragment, at any depth. Lists whose
// elements reach none are marshalled one element after another: a goroutine per element
// would cost more than the element.
func (l *Lane) ReachesIO(schema *ast.Schema, sel ast.SelectionSet, typ string, doesIO DoesIO) bool {
	k := key(sel, typ)
	if reaches, ok := l.io.get(k); ok {
		return reaches
	}
	s := l.s
	reaches, ok := false, false
	if s.plans != nil {
		reaches, ok = s.plans.getIO(sel, typ)
	}
	if !ok {
		reaches = reachesIO(schema, sel, typ, doesIO)
		if s.plans != nil {
			s.plans.putIO(sel, typ, reaches)
		}
	}
	l.io.put(k, reaches)
	return reaches
}

func reachesIO(schema *ast.Schema, sel ast.SelectionSet, typ string, doesIO DoesIO) bool {
	def := schema.Types[typ]
	if def == nil {
		return true // not ours to know: the careful answer
	}
	possible := schema.GetPossibleTypes(def)
	for _, s := range sel {
		switch s := s.(type) {
		case *ast.Field:
			if s.Name == "__typename" {
				continue
			}
			for _, p := range possible {
				if doesIO(p.Name, s.Name) {
					return true
				}
			}
			if len(s.SelectionSet) == 0 {
				continue
			}
			// Validation made sure the field exists on typ; its type is the same on every
			// implementor.
			f := def.Fields.ForName(s.Name)
			if f == nil || reachesIO(schema, s.SelectionSet, f.Type.Name(), doesIO) {
				return true
			}
		case *ast.InlineFragment:
			if deferred(s.Directives) {
				return true
			}
			on := typ
			if s.TypeCondition != "" {
				on = s.TypeCondition
			}
			if reachesIO(schema, s.SelectionSet, on, doesIO) {
				return true
			}
		case *ast.FragmentSpread:
			if deferred(s.Directives) || s.Definition == nil ||
				reachesIO(schema, s.Definition.SelectionSet, s.Definition.TypeCondition, doesIO) {
				return true
			}
		}
	}
	return false
}

func deferred(d ast.DirectiveList) bool {
	return d.ForName("defer") != nil
}

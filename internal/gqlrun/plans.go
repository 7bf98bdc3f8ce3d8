package gqlrun

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// Plans keeps, for the executions of a document that follow the first, what State works out
// about the document's selection sets: the fields collected for each (Lane.Fields), whether
// each reaches a field that does I/O (Lane.ReachesIO), and whether an alias may repeat
// (mayRepeat). A family query costs a third less to plan than to run at 20 contacts, and
// clients send the same few documents again and again. One Plans serves a whole gateway; it
// is safe for concurrent use.
//
// A selection set below the root is collected anew by each execution (gqlgen collects the
// root's fields itself, into new slices), so Plans know one by what it holds: the selections of
// the document it was collected from, each a node of the document's syntax tree. Each entry
// keeps its selections (and so the document) alive, so no other node can take their addresses
// while the entry is kept. The fields of a selection set are kept only when no directive of
// the document takes a variable: @skip, @include and @defer decide with their variables which
// fields are collected.
type Plans struct {
	mu     sync.Mutex
	docs   map[*ast.QueryDocument]docPlan
	fields map[planKey][]fieldsPlan
	io     map[planKey][]ioPlan
}

// planKey narrows the plans of a selection set down to those whose selections start with the
// same node, are as many, and are collected on the same type; the selections are compared.
type planKey struct {
	first ast.Selection // a pointer to a node of the syntax tree
	n     int
	on    *byte
}

func keyOf(sel ast.SelectionSet, on string) planKey {
	return planKey{first: sel[0], n: len(sel), on: unsafe.StringData(on)}
}

type docPlan struct {
	repeats bool // mayRepeat
	fixed   bool // no directive takes a variable: the fields collected are the document's
	// sizes are how many selection sets its executions remembered, so that the next one's
	// memos are made at their size instead of growing to it.
	sizes *memoSizes
}

type memoSizes struct{ fields, io atomic.Int32 }

// note keeps the largest sizes seen.
func (m *memoSizes) note(fields, io int) {
	if int(m.fields.Load()) < fields {
		m.fields.Store(int32(fields))
	}
	if int(m.io.Load()) < io {
		m.io.Store(int32(io))
	}
}

type fieldsPlan struct {
	sel    ast.SelectionSet // kept so that the addresses of its nodes name no others
	fields []graphql.CollectedField
}

type ioPlan struct {
	sel     ast.SelectionSet
	reaches bool
}

// Plans start again, which costs a few executions their planning and lets go of what the
// dropped plans kept alive, when they know maxDocuments documents (as many as the gateway's
// query cache keeps, so they keep alive at most as many as it does) or maxPlans selection sets
// of one kind.
const (
	maxDocuments = 1000
	maxPlans     = 20000
)

type plansKey struct{}

// WithPlans has the executions within ctx use plans.
func WithPlans(ctx context.Context, plans *Plans) context.Context {
	return context.WithValue(ctx, plansKey{}, plans)
}

func plansOf(ctx context.Context) *Plans {
	p, _ := ctx.Value(plansKey{}).(*Plans)
	return p
}

// doc is the plan of doc, made on first use.
func (p *Plans) doc(doc *ast.QueryDocument) docPlan {
	p.mu.Lock()
	d, ok := p.docs[doc]
	p.mu.Unlock()
	if ok {
		return d
	}
	d = docPlan{repeats: mayRepeat(doc), fixed: !directivesTakeVariables(doc), sizes: &memoSizes{}}
	p.mu.Lock()
	if p.docs == nil || len(p.docs) >= maxDocuments {
		p.docs = map[*ast.QueryDocument]docPlan{}
		p.fields, p.io = nil, nil
	}
	p.docs[doc] = d
	p.mu.Unlock()
	return d
}

func (p *Plans) getFields(sel ast.SelectionSet, on string) ([]graphql.CollectedField, bool) {
	if len(sel) == 0 {
		return nil, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, f := range p.fields[keyOf(sel, on)] {
		if slices.Equal(f.sel, sel) {
			return f.fields, true
		}
	}
	return nil, false
}

func (p *Plans) putFields(sel ast.SelectionSet, on string, fields []graphql.CollectedField) {
	if len(sel) == 0 {
		return
	}
	p.mu.Lock()
	if p.fields == nil || len(p.fields) >= maxPlans {
		p.fields = map[planKey][]fieldsPlan{}
	}
	k := keyOf(sel, on)
	p.fields[k] = append(p.fields[k], fieldsPlan{sel: slices.Clone(sel), fields: fields})
	p.mu.Unlock()
}

func (p *Plans) getIO(sel ast.SelectionSet, on string) (reaches, ok bool) {
	if len(sel) == 0 {
		return false, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range p.io[keyOf(sel, on)] {
		if slices.Equal(r.sel, sel) {
			return r.reaches, true
		}
	}
	return false, false
}

func (p *Plans) putIO(sel ast.SelectionSet, on string, reaches bool) {
	if len(sel) == 0 {
		return
	}
	p.mu.Lock()
	if p.io == nil || len(p.io) >= maxPlans {
		p.io = map[planKey][]ioPlan{}
	}
	k := keyOf(sel, on)
	p.io[k] = append(p.io[k], ioPlan{sel: slices.Clone(sel), reaches: reaches})
	p.mu.Unlock()
}

// directivesTakeVariables reports whether a directive anywhere in doc has an argument that is,
// or holds, a variable.
func directivesTakeVariables(doc *ast.QueryDocument) bool {
	var inSet func(ast.SelectionSet) bool
	inDirectives := func(ds ast.DirectiveList) bool {
		for _, d := range ds {
			for _, a := range d.Arguments {
				if holdsVariable(a.Value) {
					return true
				}
			}
		}
		return false
	}
	inSet = func(set ast.SelectionSet) bool {
		for _, s := range set {
			switch s := s.(type) {
			case *ast.Field:
				if inDirectives(s.Directives) || inSet(s.SelectionSet) {
					return true
				}
			case *ast.InlineFragment:
				if inDirectives(s.Directives) || inSet(s.SelectionSet) {
					return true
				}
			case *ast.FragmentSpread:
				if inDirectives(s.Directives) {
					return true
				}
			}
		}
		return false
	}
	for _, op := range doc.Operations {
		if inSet(op.SelectionSet) {
			return true
		}
	}
	for _, f := range doc.Fragments {
		if inDirectives(f.Directives) || inSet(f.SelectionSet) {
			return true
		}
	}
	return false
}

func holdsVariable(v *ast.Value) bool {
	if v == nil {
		return false
	}
	if v.Kind == ast.Variable {
		return true
	}
	for _, c := range v.Children {
		if holdsVariable(c.Value) {
			return true
		}
	}
	return false
}

package graph_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
)

// opGen makes random queries over a schema: every object, interface and union the query root
// reaches, through fields with their arguments (from values by name, or made up from their
// type), aliases, inline fragments and named fragments on the union and the interfaces,
// __typename, @skip and @include, and variables. Most are valid; the executor refuses the
// others (fields that collide through a named fragment), and the caller makes another.
type opGen struct {
	schema *ast.Schema
	rng    *rand.Rand
	// values are the values an argument is drawn from, by "Type.field.argument" or by name.
	values map[string][]any

	// The operation being made.
	op     *operation
	budget int // fields it may still select
	nextID int
}

const (
	maxDepth  = 7
	maxFields = 60
)

func newOpGen(schema interface{ Schema() *ast.Schema }, values map[string][]any, seed uint64) *opGen {
	return &opGen{schema: schema.Schema(), rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), values: values}
}

// operation is a query as a tree, so that a difference can be shrunk node by node.
type operation struct {
	sel   []*node
	vars  map[string]*variable
	frags map[string]*fragment
}

// node is a field, an inline fragment or a fragment spread.
type node struct {
	name, alias string // a field's
	args        []argument
	directive   string // @skip or @include with its argument, or ""
	on          string // an inline fragment's type condition; "" for none
	inline      bool
	spread      string // a named fragment's name
	sel         []*node
}

type argument struct {
	name  string
	value any // a Go value as literal renders it, or a *variable
}

type variable struct {
	name, typ string
	value     any
}

type fragment struct {
	name, on string
	sel      []*node
}

// enum is an enum value: a bare name in a literal, a string in variables.
type enum string

func (g *opGen) id(prefix string) string {
	g.nextID++
	return fmt.Sprintf("%s%d", prefix, g.nextID)
}

func (g *opGen) chance(p float64) bool { return g.rng.Float64() < p }

// operation makes a query of one to four root fields.
func (g *opGen) operation() *operation {
	g.op = &operation{vars: map[string]*variable{}, frags: map[string]*fragment{}}
	g.budget = maxFields
	g.nextID = 0
	g.op.sel = g.selection(g.schema.Query, 0, map[string]bool{}, 1+g.rng.IntN(4))
	return g.op
}

// selection selects n things on t: fields, __typename and fragments.
func (g *opGen) selection(t *ast.Definition, depth int, used map[string]bool, n int) []*node {
	var out []*node
	for range n {
		switch r := g.rng.Float64(); {
		case depth > 0 && r < 0.08:
			out = append(out, g.typename(used))
		case depth > 0 && r < 0.22 && len(g.conditions(t)) > 0:
			out = append(out, g.inlineFragment(t, depth, used))
		case depth > 0 && r < 0.3 && len(g.conditions(t)) > 0:
			out = append(out, g.spread(t, depth))
		default:
			if f := g.field(t, depth, used); f != nil {
				out = append(out, f)
			}
		}
	}
	if len(out) == 0 {
		out = append(out, g.typename(used))
	}
	return out
}

func (g *opGen) typename(used map[string]bool) *node {
	n := &node{name: "__typename"}
	if used[n.name] || g.chance(0.2) {
		n.alias = g.id("t")
	}
	used[n.responseName()] = true
	return n
}

// conditions are the types a fragment on t may name: t's possible types, and the abstract
// types any of them belongs to.
func (g *opGen) conditions(t *ast.Definition) []string {
	var out []string
	add := func(name string) {
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	if t == g.schema.Query {
		return nil
	}
	for _, p := range g.schema.GetPossibleTypes(t) {
		add(p.Name)
		for _, i := range g.schema.GetImplements(p) {
			add(i.Name)
		}
		for _, u := range g.schema.Types {
			if u.Kind == ast.Union && slices.Contains(u.Types, p.Name) {
				add(u.Name)
			}
		}
	}
	slices.Sort(out)
	return out
}

func (g *opGen) inlineFragment(t *ast.Definition, depth int, used map[string]bool) *node {
	n := &node{inline: true, directive: g.directive(0.3)}
	on := t
	if conds := g.conditions(t); !g.chance(0.15) {
		n.on = conds[g.rng.IntN(len(conds))]
		on = g.schema.Types[n.on]
	}
	n.sel = g.selection(on, depth+1, used, 1+g.rng.IntN(3))
	return n
}

// spread spreads a named fragment on a type fragments on t may name: one made before, or a new
// one. A fragment made while another is being made may spread only finished ones, so none
// spreads itself.
func (g *opGen) spread(t *ast.Definition, depth int) *node {
	conds := g.conditions(t)
	on := conds[g.rng.IntN(len(conds))]
	var reuse []string
	for name, f := range g.op.frags {
		if f.sel != nil && slices.Contains(conds, f.on) {
			reuse = append(reuse, name)
		}
	}
	slices.Sort(reuse)
	if len(reuse) > 0 && g.chance(0.5) {
		return &node{spread: reuse[g.rng.IntN(len(reuse))], directive: g.directive(0.2)}
	}
	f := &fragment{name: g.id("F"), on: on}
	g.op.frags[f.name] = f
	sel := g.selection(g.schema.Types[on], depth+1, map[string]bool{}, 1+g.rng.IntN(3))
	f.sel = sel
	return &node{spread: f.name, directive: g.directive(0.2)}
}

// field selects one of t's fields, aliased when its name is taken in this selection.
func (g *opGen) field(t *ast.Definition, depth int, used map[string]bool) *node {
	var fields []*ast.FieldDefinition
	for _, f := range t.Fields {
		if !strings.HasPrefix(f.Name, "__") {
			fields = append(fields, f)
		}
	}
	if len(fields) == 0 {
		return nil
	}
	def := fields[g.rng.IntN(len(fields))]
	typ := g.schema.Types[def.Type.Name()]
	leaf := typ.Kind == ast.Scalar || typ.Kind == ast.Enum
	if !leaf && (depth >= maxDepth || g.budget <= 0) {
		// Too deep for another object: a leaf instead, if t has one.
		var leaves []*ast.FieldDefinition
		for _, f := range fields {
			if k := g.schema.Types[f.Type.Name()].Kind; k == ast.Scalar || k == ast.Enum {
				leaves = append(leaves, f)
			}
		}
		if len(leaves) == 0 {
			return nil
		}
		def, typ, leaf = leaves[g.rng.IntN(len(leaves))], nil, true
	}
	g.budget--
	n := &node{name: def.Name, directive: g.directive(0.08)}
	for _, a := range def.Arguments {
		if a.Type.NonNull && a.DefaultValue == nil || g.chance(0.5) {
			n.args = append(n.args, argument{name: a.Name, value: g.argument(t.Name+"."+def.Name, a)})
		}
	}
	if used[def.Name] || len(n.args) > 0 || g.chance(0.15) {
		n.alias = g.id("a")
	}
	used[n.responseName()] = true
	if !leaf {
		n.sel = g.selection(typ, depth+1, map[string]bool{}, 1+g.rng.IntN(4))
	}
	return n
}

func (n *node) responseName() string {
	if n.alias != "" {
		return n.alias
	}
	return n.name
}

// directive is @skip or @include, with a literal or a variable, with probability p.
func (g *opGen) directive(p float64) string {
	if !g.chance(p) {
		return ""
	}
	name := "skip"
	if g.chance(0.5) {
		name = "include"
	}
	var cond any = g.chance(0.5)
	if g.chance(0.4) {
		cond = g.variable("Boolean!", cond)
	}
	return fmt.Sprintf("@%s(if: %s)", name, literal(cond))
}

// argument is a value for argument a of field (Type.field), sometimes in a variable.
func (g *opGen) argument(field string, a *ast.ArgumentDefinition) any {
	v := g.value(field+"."+a.Name, a.Name, a.Type, 0)
	if g.chance(0.25) {
		return g.variable(a.Type.String(), v)
	}
	return v
}

func (g *opGen) variable(typ string, v any) *variable {
	x := &variable{name: g.id("v"), typ: typ, value: v}
	g.op.vars[x.name] = x
	return x
}

// value is a value of type t, for an argument or input field called name.
func (g *opGen) value(key, name string, t *ast.Type, depth int) any {
	if !t.NonNull && g.chance(0.05) {
		return nil
	}
	if t.Elem != nil {
		out := []any{}
		for range g.rng.IntN(4) {
			out = append(out, g.value(key, name, t.Elem, depth+1))
		}
		return out
	}
	for _, k := range []string{key, name} {
		if vs := g.values[k]; len(vs) > 0 {
			return vs[g.rng.IntN(len(vs))]
		}
	}
	def := g.schema.Types[t.Name()]
	switch {
	case def.Kind == ast.Enum:
		return enum(def.EnumValues[g.rng.IntN(len(def.EnumValues))].Name)
	case def.Kind == ast.InputObject:
		obj := map[string]any{}
		for _, f := range def.Fields {
			if f.Type.NonNull || g.chance(0.5) {
				obj[f.Name] = g.value(def.Name+"."+f.Name, f.Name, f.Type, depth+1)
			}
		}
		return obj
	case t.Name() == "Int":
		return g.rng.IntN(5)
	case t.Name() == "Float":
		return float64(g.rng.IntN(100)) / 4
	case t.Name() == "Boolean":
		return g.chance(0.5)
	}
	return fmt.Sprintf("x%d", g.rng.IntN(3))
}

// literal writes v as GraphQL.
func literal(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case *variable:
		return "$" + v.name
	case enum:
		return string(v)
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = literal(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + ": " + literal(v[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	default:
		b, _ := json.Marshal(v)
		return string(b)
	}
}

// jsonValue is v as variables carry it.
func jsonValue(v any) any {
	switch v := v.(type) {
	case enum:
		return string(v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = jsonValue(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = jsonValue(e)
		}
		return out
	}
	return v
}

// render writes the operation and its variables, with only the fragments and variables it uses.
func (o *operation) render() (string, map[string]any) {
	r := &renderer{o: o, vars: map[string]bool{}, frags: map[string]bool{}}
	var body strings.Builder
	r.selection(&body, o.sel)
	var frags strings.Builder
	for len(r.pending) > 0 {
		f := o.frags[r.pending[0]]
		r.pending = r.pending[1:]
		fmt.Fprintf(&frags, "\nfragment %s on %s ", f.name, f.on)
		r.selection(&frags, f.sel)
	}
	var head strings.Builder
	head.WriteString("query")
	vars := map[string]any{}
	if len(r.vars) > 0 {
		names := make([]string, 0, len(r.vars))
		for name := range r.vars {
			names = append(names, name)
		}
		slices.Sort(names)
		defs := make([]string, len(names))
		for i, name := range names {
			v := o.vars[name]
			defs[i] = "$" + name + ": " + v.typ
			vars[name] = jsonValue(v.value)
		}
		head.WriteString("(" + strings.Join(defs, ", ") + ")")
	}
	return head.String() + " " + body.String() + frags.String(), vars
}

type renderer struct {
	o       *operation
	vars    map[string]bool
	frags   map[string]bool
	pending []string
}

func (r *renderer) selection(b *strings.Builder, sel []*node) {
	b.WriteString("{")
	for i, n := range sel {
		if i > 0 {
			b.WriteString(" ")
		}
		switch {
		case n.spread != "":
			b.WriteString("..." + n.spread)
			if !r.frags[n.spread] {
				r.frags[n.spread] = true
				r.pending = append(r.pending, n.spread)
			}
		case n.inline:
			b.WriteString("...")
			if n.on != "" {
				b.WriteString(" on " + n.on)
			}
		default:
			if n.alias != "" {
				b.WriteString(n.alias + ": ")
			}
			b.WriteString(n.name)
			if len(n.args) > 0 {
				parts := make([]string, len(n.args))
				for i, a := range n.args {
					parts[i] = a.name + ": " + r.value(a.value)
				}
				b.WriteString("(" + strings.Join(parts, ", ") + ")")
			}
		}
		if n.directive != "" {
			b.WriteString(" " + r.directive(n.directive))
		}
		if n.sel != nil {
			b.WriteString(" ")
			r.selection(b, n.sel)
		}
	}
	b.WriteString("}")
}

func (r *renderer) value(v any) string {
	if x, ok := v.(*variable); ok {
		r.vars[x.name] = true
	}
	return literal(v)
}

// directive notes the variable a directive's text names, if any.
func (r *renderer) directive(d string) string {
	if i := strings.Index(d, "$"); i >= 0 {
		r.vars[strings.TrimSuffix(d[i+1:], ")")] = true
	}
	return d
}

// size counts the operation's fields, fragments' included once per spread.
func (o *operation) size() int {
	var count func([]*node) int
	count = func(sel []*node) int {
		total := 0
		for _, n := range sel {
			if n.spread != "" {
				if f := o.frags[n.spread]; f != nil {
					total += count(f.sel)
				}
				continue
			}
			if !n.inline {
				total++
			}
			total += count(n.sel)
		}
		return total
	}
	return count(o.sel)
}

// shrink removes from o, one node at a time, whatever still leaves an operation that differs,
// until nothing more can go: what is left is the difference's smallest witness.
func shrink(o *operation, differs func(*operation) bool) *operation {
	for {
		smaller := false
		for _, list := range o.lists() {
			for i := 0; i < len(*list); i++ {
				saved := *list
				if len(saved) == 1 {
					break // a selection set cannot be empty; its parent goes instead
				}
				*list = slices.Delete(slices.Clone(saved), i, i+1)
				if differs(o) {
					smaller = true
					i--
					continue
				}
				*list = saved
			}
		}
		if !smaller {
			return o
		}
	}
}

// lists are the operation's selection sets, the root's first, then each node's and fragment's.
func (o *operation) lists() []*[]*node {
	out := []*[]*node{&o.sel}
	var walk func([]*node)
	walk = func(sel []*node) {
		for _, n := range sel {
			if n.sel != nil {
				out = append(out, &n.sel)
				walk(n.sel)
			}
		}
	}
	walk(o.sel)
	names := make([]string, 0, len(o.frags))
	for name := range o.frags {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		f := o.frags[name]
		out = append(out, &f.sel)
		walk(f.sel)
	}
	return out
}

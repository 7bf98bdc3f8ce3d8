package oplimit

import (
	"encoding/json"
	"math"
	"strconv"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/lexer"
	"github.com/vektah/gqlparser/v2/parser"
)

// measures are what the static limits look at, for the operation a request executes.
type measures struct {
	depth, aliases, rootFields int
	cost                       int64
	// unfinished says the measuring stopped when its work passed the cost limit: the cost is
	// then at least work, since every selection it visits costs at least 1.
	unfinished bool
	work       int
}

// unlimitedWork bounds the measuring when no cost limit does.
const unlimitedWork = 1 << 20

// parse counts query's tokens, refusing it over l.Tokens, then parses it. It returns no
// document for one gqlgen will refuse anyway, one that does not parse.
func parse(l Limits, query string) (*ast.QueryDocument, *gqlerror.Error) {
	if l.Tokens > 0 {
		if n := countTokens(query); n > l.Tokens {
			return nil, refusal("The operation has %d tokens; at most %d are allowed (GRAPHQL_MAX_TOKENS)", n, l.Tokens)
		}
	}
	doc, err := parser.ParseQuery(&ast.Source{Input: query})
	if err != nil {
		return nil, nil
	}
	return doc, nil
}

// measure measures the operation named operation of doc, which it does not change. It returns
// no measures when there is no such operation: gqlgen refuses it.
func measure(schema *ast.Schema, l Limits, doc *ast.QueryDocument, operation string, vars map[string]any) *measures {
	m, _ := measureOnce(schema, l, doc, operation, vars)
	return m
}

// measureOnce is measure, and whether its measures hold for any variables: none sized a list.
func measureOnce(schema *ast.Schema, l Limits, doc *ast.QueryDocument, operation string, vars map[string]any) (*measures, bool) {
	op := doc.Operations.ForName(operation)
	if op == nil {
		return nil, true
	}
	w := &walker{schema: schema, doc: doc, sizes: l.ListSizes, vars: vars, op: op, work: unlimitedWork}
	if l.Cost > 0 && l.Cost < (unlimitedWork-1000)/2 {
		// Past this many selections the operation costs more than the limit, since each costs at
		// least 1; the margin lets the refusal say by how much, for all but the largest. A
		// larger limit still stops the measuring at unlimitedWork, and doubling it must not
		// overflow.
		w.work = 2*l.Cost + 1000
	}
	root := rootType(schema, op.Operation)
	m := &measures{work: w.work}
	groups := w.collect([]source{{set: op.SelectionSet, parent: root}})
	m.rootFields = len(groups)
	m.cost = w.cost(groups, 0, 0, true)
	m.depth, m.aliases = w.depth, w.aliases
	// Validation also checks the operations not executed, and every fragment on its own: they
	// cost what it does, 1 a field and 1 a pair it compares, without the lists' sizes.
	for _, other := range doc.Operations {
		if other != op {
			m.cost = add(m.cost, w.cost(w.collect([]source{{set: other.SelectionSet, parent: rootType(schema, other.Operation)}}), 0, 0, false))
		}
	}
	for _, f := range doc.Fragments {
		m.cost = add(m.cost, w.cost(w.collect([]source{{set: f.SelectionSet, parent: f.TypeCondition}}), 0, 0, false))
	}
	m.unfinished = w.work < 0
	return m, !w.readVars
}

// countTokens counts the tokens as gqlgen's parser does: comments count, the end does not. A
// document the lexer cannot read counts as far as it could: the parser refuses it.
func countTokens(query string) int {
	lex := lexer.New(&ast.Source{Input: query})
	n := 0
	for {
		tok, err := lex.ReadToken()
		if err != nil || tok.Kind == lexer.EOF {
			return n
		}
		n++
	}
}

func rootType(schema *ast.Schema, op ast.Operation) string {
	var def *ast.Definition
	switch op {
	case ast.Query:
		def = schema.Query
	case ast.Mutation:
		def = schema.Mutation
	case ast.Subscription:
		def = schema.Subscription
	}
	if def == nil {
		return ""
	}
	return def.Name
}

// walker measures selections as gqlgen executes them: fields merged by response name, inline
// fragments and named fragments expanded into the selection set that holds them. A document not
// yet validated may name unknown fields and types, spread unknown fragments and spread
// fragments in cycles: unknown things cost 1 and cycles are not followed.
type walker struct {
	schema *ast.Schema
	doc    *ast.QueryDocument
	sizes  map[string]int
	vars   map[string]any
	op     *ast.OperationDefinition

	// work is how many more selections the walker may visit; below zero it has stopped.
	work int
	// readVars says whether a variable sized a list: if none did, the measures are the
	// document's, whatever the variables.
	readVars bool

	depth, aliases int
}

// source is a selection set and the type it selects on, with the fragments spread on the way
// to it, so a fragment spread within itself is not expanded again.
type source struct {
	set    ast.SelectionSet
	parent string
	spread *fragmentPath
}

type fragmentPath struct {
	name string
	up   *fragmentPath
}

func (p *fragmentPath) has(name string) bool {
	for ; p != nil; p = p.up {
		if p.name == name {
			return true
		}
	}
	return false
}

// group is the selections of one response name in a selection set.
type group struct {
	fields []selected
	// fragmentPairs counts the pairs of distinct fragments spread into the selection set; it
	// is set on the set's first group.
	fragmentPairs int64
}

type selected struct {
	field  *ast.Field
	parent string
	spread *fragmentPath
}

// collect merges sources into groups by response name, in order of first appearance. Like
// gqlgen's CollectFields it expands a named fragment once per selection set; unlike it, it
// ignores type conditions and directives, so the cost covers every type a selection may meet.
func (w *walker) collect(srcs []source) []group {
	var groups []group
	index := map[string]int{}
	seen := map[string]bool{}
	var add func(s source)
	add = func(s source) {
		for _, sel := range s.set {
			if w.work < 0 {
				return
			}
			switch sel := sel.(type) {
			case *ast.Field:
				w.work--
				i, ok := index[sel.Alias]
				if !ok {
					i = len(groups)
					index[sel.Alias] = i
					groups = append(groups, group{})
				}
				groups[i].fields = append(groups[i].fields, selected{field: sel, parent: s.parent, spread: s.spread})
			case *ast.InlineFragment:
				parent := s.parent
				if sel.TypeCondition != "" {
					parent = sel.TypeCondition
				}
				add(source{set: sel.SelectionSet, parent: parent, spread: s.spread})
			case *ast.FragmentSpread:
				if seen[sel.Name] || s.spread.has(sel.Name) {
					continue
				}
				seen[sel.Name] = true
				if f := w.doc.Fragments.ForName(sel.Name); f != nil {
					add(source{set: f.SelectionSet, parent: f.TypeCondition, spread: &fragmentPath{name: sel.Name, up: s.spread}})
				}
			}
		}
	}
	for _, s := range srcs {
		add(s)
	}
	if n := int64(len(seen)); len(groups) > 0 && n > 1 {
		groups[0].fragmentPairs = n * (n - 1) / 2
	}
	return groups
}

// cost returns the cost of groups selected at depth, under a connection whose page holds
// pageSize items when pageSize is above zero. Only the executed operation (executed) counts
// depth, aliases and the sizes of lists; every selection counts its validation pairs.
func (w *walker) cost(groups []group, depth, pageSize int, executed bool) int64 {
	var total int64
	for _, g := range groups {
		if w.work < 0 {
			return total
		}
		total = add(total, g.fragmentPairs)
		k := int64(len(g.fields))
		total = add(total, k*(k-1)/2)

		first := g.fields[0]
		f := first.field
		def := w.fieldDef(first.parent, f.Name)
		level := depth
		if f.Name != "ofType" {
			level++
		}
		if executed {
			w.depth = max(w.depth, level)
			if f.Alias != f.Name {
				w.aliases++
			}
		}

		var children []source
		for _, s := range g.fields {
			if len(s.field.SelectionSet) > 0 {
				children = append(children, source{set: s.field.SelectionSet, parent: w.typeOf(s.parent, s.field.Name), spread: s.spread})
			}
		}
		mult, page := 1, 0
		if executed {
			mult, page = w.size(first, def, pageSize)
		}
		var sub int64
		if len(children) > 0 {
			sub = w.cost(w.collect(children), level, page, executed)
		}
		total = add(total, add(1, mul(int64(mult), sub)))
	}
	return total
}

// sizeArguments are the arguments that bound a list, or a connection's page.
var sizeArguments = []string{"first", "limit", "last"}

// maxPage is the largest page any list of the schema serves (documents' first, recentEvents'
// last). A larger size argument counts as this much: the field refuses it itself, with a
// message that says what it accepts.
const maxPage = 1000

// size returns how many times a field's selection is made (its list's size, or 1), and the page
// size it sets for the nodes of a connection beneath it.
func (w *walker) size(s selected, def *ast.FieldDefinition, pageSize int) (mult, page int) {
	if def == nil {
		return 1, 0
	}
	list := def.Type.Elem != nil
	// A size the query gives counts before one a default gives: topAccounts(last: 50) pages 50,
	// though its deprecated limit defaults to 20.
	for _, given := range []bool{true, false} {
		for _, name := range sizeArguments {
			if def.Arguments.ForName(name) == nil || given && !w.gives(s.field, name) {
				continue
			}
			n, ok := w.intArgument(s.field, def, name)
			switch {
			case !ok:
			case list:
				return min(max(n, 1), maxPage), 0
			default:
				return 1, min(max(n, 1), maxPage)
			}
		}
	}
	if !list {
		return 1, 0
	}
	// A list of the objects of given ids (nodes(ids:)) is as long as its ids.
	if def.Arguments.ForName("ids") != nil {
		if n, ok := w.listLen(s.field, "ids"); ok {
			return min(max(n, 1), maxPage), 0
		}
	}
	if pageSize > 0 && (s.field.Name == "nodes" || s.field.Name == "edges") {
		return pageSize, 0
	}
	return w.listSize(s.parent, s.field.Name), 0
}

func (w *walker) listSize(parent, field string) int {
	if n, ok := w.sizes[parent+"."+field]; ok {
		return n
	}
	if n, ok := w.sizes[field]; ok {
		return n
	}
	return max(w.sizes[""], 1)
}

// gives reports whether the query gives the field's argument name a value that is not null.
func (w *walker) gives(f *ast.Field, name string) bool {
	a := f.Arguments.ForName(name)
	if a == nil {
		return false
	}
	_, ok := w.intValue(a.Value)
	return ok
}

// intArgument returns the value of a field's integer argument: the one given, from a variable
// or the variable's default, or the argument's default. A null or absent value takes the
// argument's default, as the resolvers do.
func (w *walker) intArgument(f *ast.Field, def *ast.FieldDefinition, name string) (int, bool) {
	if a := f.Arguments.ForName(name); a != nil {
		if n, ok := w.intValue(a.Value); ok {
			return n, true
		}
	}
	if d := def.Arguments.ForName(name); d != nil && d.DefaultValue != nil {
		return w.intValue(d.DefaultValue)
	}
	return 0, false
}

// listLen returns the length of a field's list argument: a literal list, or a variable's. A
// single value where a list is expected is a list of one.
func (w *walker) listLen(f *ast.Field, name string) (int, bool) {
	a := f.Arguments.ForName(name)
	if a == nil || a.Value == nil {
		return 0, false
	}
	switch v := a.Value; v.Kind {
	case ast.ListValue:
		return len(v.Children), true
	case ast.Variable:
		switch raw := w.vars[v.Raw].(type) {
		case []any:
			return len(raw), true
		case nil:
			return 0, false
		default:
			return 1, true
		}
	default:
		return 1, true
	}
}

// intValue reads an integer literal or variable; a variable's default is a literal.
func (w *walker) intValue(v *ast.Value) (int, bool) {
	if v == nil {
		return 0, false
	}
	switch v.Kind {
	case ast.IntValue:
		n, err := strconv.Atoi(v.Raw)
		return n, err == nil
	case ast.Variable:
		w.readVars = true
		if raw, ok := w.vars[v.Raw]; ok {
			return jsonInt(raw)
		}
		if d := w.op.VariableDefinitions.ForName(v.Raw); d != nil {
			return w.intValue(d.DefaultValue)
		}
	}
	return 0, false
}

// jsonInt reads an integer from a decoded JSON variable.
func jsonInt(v any) (int, bool) {
	switch v := v.(type) {
	case json.Number:
		n, err := strconv.Atoi(string(v))
		return n, err == nil
	case float64:
		if v != math.Trunc(v) || math.Abs(v) > math.MaxInt32 {
			return 0, false
		}
		return int(v), true
	case int:
		return v, true
	case int64:
		if v > math.MaxInt32 || v < math.MinInt32 {
			return 0, false
		}
		return int(v), true
	}
	return 0, false
}

// fieldDef finds a field of a type, introspection's included.
func (w *walker) fieldDef(parent, name string) *ast.FieldDefinition {
	switch name {
	case "__schema":
		return &ast.FieldDefinition{Name: name, Type: ast.NonNullNamedType("__Schema", nil)}
	case "__type":
		return &ast.FieldDefinition{Name: name, Type: ast.NamedType("__Type", nil)}
	case "__typename":
		return nil
	}
	t := w.schema.Types[parent]
	if t == nil {
		return nil
	}
	return t.Fields.ForName(name)
}

// typeOf returns the name of the type a field returns, or "" when it is unknown.
func (w *walker) typeOf(parent, name string) string {
	if def := w.fieldDef(parent, name); def != nil {
		return def.Type.Name()
	}
	return ""
}

// add and mul saturate: an operation that costs more than int64 holds is refused all the same.
func add(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

func mul(a, b int64) int64 {
	if a != 0 && b > math.MaxInt64/a {
		return math.MaxInt64
	}
	return a * b
}

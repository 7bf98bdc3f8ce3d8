package oplimit

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
)

// small are limits that the tests' operations reach with a few fields. Each case switches on
// the one limit it is about.
func small(set func(*Limits)) Limits {
	l := Limits{ListSizes: map[string]int{"": 4, "Book.related": 10}}
	set(&l)
	return l
}

func TestStaticLimitsRefuseAnOperationBeforeAnyResolverRuns(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		limits Limits
		query  string
		vars   map[string]any
		// want is the refusal's message; empty, the operation runs.
		want string
	}{
		{"tokens at the limit", small(func(l *Limits) { l.Tokens = 5 }), "{ version version version }", nil, ""},
		{"tokens over the limit", small(func(l *Limits) { l.Tokens = 5 }), "{ version version version version }", nil,
			"The operation has 6 tokens; at most 5 are allowed (GRAPHQL_MAX_TOKENS)"},
		{"comments are tokens", small(func(l *Limits) { l.Tokens = 4 }), "# why\n{ version } # and why not\n", nil,
			"The operation has 5 tokens; at most 4 are allowed (GRAPHQL_MAX_TOKENS)"},

		{"depth at the limit", small(func(l *Limits) { l.Depth = 3 }), "{ books { related { title } } }", nil, ""},
		{"depth over the limit", small(func(l *Limits) { l.Depth = 3 }), "{ books { related { related { title } } } }", nil,
			"The operation is 4 levels deep; at most 3 are allowed (GRAPHQL_MAX_DEPTH)"},
		{"depth counts through fragments", small(func(l *Limits) { l.Depth = 3 }),
			"{ books { ...R } } fragment R on Book { related { ... on Book { related { title } } } }", nil,
			"The operation is 4 levels deep; at most 3 are allowed (GRAPHQL_MAX_DEPTH)"},

		{"aliases at the limit", small(func(l *Limits) { l.Aliases = 2 }), "{ a: version b: version version: version }", nil, ""},
		{"aliases over the limit", small(func(l *Limits) { l.Aliases = 2 }), "{ a: version b: version c: version }", nil,
			"The operation has 3 aliases; at most 2 are allowed (GRAPHQL_MAX_ALIASES)"},
		{"aliases count each time a fragment is spread", small(func(l *Limits) { l.Aliases = 2 }),
			"{ a: books { ...T } b: books { ...T } } fragment T on Book { t: title }", nil,
			"The operation has 4 aliases; at most 2 are allowed (GRAPHQL_MAX_ALIASES)"},

		{"root fields at the limit", small(func(l *Limits) { l.RootFields = 2 }), "{ version books { title } version }", nil, ""},
		{"root fields over the limit", small(func(l *Limits) { l.RootFields = 2 }), "{ version books { title } shelves { total } }", nil,
			"The operation selects 3 root fields; at most 2 are allowed (GRAPHQL_MAX_ROOT_FIELDS)"},

		// books(limit: 7) { title } costs 1 + 7 × 1.
		{"cost at the limit", small(func(l *Limits) { l.Cost = 8 }), "{ books(limit: 7) { title } }", nil, ""},
		{"cost over the limit", small(func(l *Limits) { l.Cost = 7 }), "{ books(limit: 7) { title } }", nil,
			"The operation costs 8; at most 7 is allowed (GRAPHQL_MAX_COST)"},
		{"a list's size from a variable", small(func(l *Limits) { l.Cost = 7 }), "query($n: Int) { books(limit: $n) { title } }",
			map[string]any{"n": 7}, "The operation costs 8; at most 7 is allowed (GRAPHQL_MAX_COST)"},
		{"a list's size from a variable's default", small(func(l *Limits) { l.Cost = 7 }), "query($n: Int = 7) { books(limit: $n) { title } }", nil,
			"The operation costs 8; at most 7 is allowed (GRAPHQL_MAX_COST)"},
		// The list size assumed for books without a limit is 4: 1 + 4 × 2.
		{"an unbounded list's assumed size", small(func(l *Limits) { l.Cost = 8 }), "{ books { title genre } }", nil,
			"The operation costs 9; at most 8 is allowed (GRAPHQL_MAX_COST)"},
		// shelves(first: 3) { total nodes { name } }: 1 + total 1 + nodes (1 + 3 × 1).
		{"a connection's first sizes its nodes", small(func(l *Limits) { l.Cost = 5 }), "{ shelves(first: 3) { total nodes { name } } }", nil,
			"The operation costs 6; at most 5 is allowed (GRAPHQL_MAX_COST)"},
		// shelves' default first is 10: 1 + 1 × (1 + 10 × 1).
		{"a connection's default first", small(func(l *Limits) { l.Cost = 11 }), "{ shelves { nodes { name } } }", nil,
			"The operation costs 12; at most 11 is allowed (GRAPHQL_MAX_COST)"},
		// shelfPages(last: 30), whose deprecated limit defaults to 10, pages 30 (the cursor
		// connections specification's "last: Non-negative integer", a page size): 1 + 1 × (1 + 30 × 1).
		{"a connection's last counts before another size's default", small(func(l *Limits) { l.Cost = 31 }), "{ shelfPages(last: 30) { nodes { name } } }", nil,
			"The operation costs 32; at most 31 is allowed (GRAPHQL_MAX_COST)"},
		{"a connection's first counts before another size's default", small(func(l *Limits) { l.Cost = 31 }), "{ shelfPages(first: 30) { nodes { name } } }", nil,
			"The operation costs 32; at most 31 is allowed (GRAPHQL_MAX_COST)"},
		// Book.related is assumed 10 long: 1 + 2 × (1 + 10 × (1 + 10 × 1)).
		{"recursion through lists costs what it returns", small(func(l *Limits) { l.Cost = 100 }),
			"{ books(limit: 2) { related { related { title } } } }", nil,
			"The operation costs 223; at most 100 is allowed (GRAPHQL_MAX_COST)"},
		// A size argument counts at most maxPage: the field itself refuses more.
		{"a huge size argument counts as the largest page", small(func(l *Limits) { l.Cost = 1000 }),
			"{ books(limit: 1000000) { title } }", nil, "The operation costs 1001; at most 1000 is allowed (GRAPHQL_MAX_COST)"},
		// __schema { types { name } }: 1 + (1 + 4 × 1).
		{"introspection costs like any other field", small(func(l *Limits) { l.Cost = 5 }), "{ __schema { types { name } } }", nil,
			"The operation costs 6; at most 5 is allowed (GRAPHQL_MAX_COST)"},
		// item 1, title 1, name 1, though an item is a book or a shelf.
		{"every type condition counts", small(func(l *Limits) { l.Cost = 2 }),
			`{ item(id: 1) { ... on Book { title } ... on Shelf { name } } }`, nil,
			"The operation costs 3; at most 2 is allowed (GRAPHQL_MAX_COST)"},
		// items(ids:) is as long as its ids, not the size assumed for lists: 1 + 6 × 1. The
		// issue: "node/nodes must be costed sensibly".
		{"a list by ids is as long as its ids", small(func(l *Limits) { l.Cost = 6 }),
			`{ items(ids: [1, 2, 3, 4, 5, 6]) { ... on Book { title } } }`, nil,
			"The operation costs 7; at most 6 is allowed (GRAPHQL_MAX_COST)"},
		{"a list by ids from a variable", small(func(l *Limits) { l.Cost = 6 }),
			`query($ids: [ID!]!) { items(ids: $ids) { ... on Book { title } } }`, map[string]any{"ids": []any{"1", "2", "3", "4", "5", "6"}},
			"The operation costs 7; at most 6 is allowed (GRAPHQL_MAX_COST)"},
		{"a list by ids, short", small(func(l *Limits) { l.Cost = 2 }),
			`query($ids: [ID!]!) { items(ids: $ids) { ... on Book { title } } }`, map[string]any{"ids": []any{"1"}}, ""},
		// Three selections of version merge into one field (1) whose three pairs validation
		// compares (3).
		{"repeated selections count the pairs validation compares", small(func(l *Limits) { l.Cost = 3 }), "{ version version version }", nil,
			"The operation costs 4; at most 3 is allowed (GRAPHQL_MAX_COST)"},
		{"a fragment bomb stops the measuring", small(func(l *Limits) { l.Cost = 1000 }), fragmentBomb(20), nil,
			"The operation costs more than 1000; at most 1000 is allowed (GRAPHQL_MAX_COST)"},

		{"zero limits are off", Limits{}, "{ a: books(limit: 500) { b: related { c: related { d: related { title } } } } }", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			lib := newLibrary(t)
			resp := run(context.Background(), lib.executor(tc.limits), tc.query, tc.vars)
			if tc.want == "" {
				if len(resp.Errors) > 0 {
					t.Fatalf("got errors %v, want none", resp.Errors)
				}
				return
			}
			if len(resp.Errors) != 1 || resp.Errors[0].Message != tc.want || fmt.Sprint(resp.Errors[0].Extensions["code"]) != "OPERATION_LIMIT_EXCEEDED" {
				t.Errorf("got %v, want one OPERATION_LIMIT_EXCEEDED error %q", resp.Errors, tc.want)
			}
			if n := lib.calls.Load(); n != 0 {
				t.Errorf("got %d resolver calls, want none", n)
			}
		})
	}
}

// fragmentBomb is a short document whose fragments, expanded, select 2^levels fields.
func fragmentBomb(levels int) string {
	var b strings.Builder
	b.WriteString("{ books { ...F0 } }\n")
	for i := range levels {
		b.WriteString("fragment F" + strconv.Itoa(i) + " on Book { a: related { ...F" + strconv.Itoa(i+1) + " } b: related { ...F" + strconv.Itoa(i+1) + " } }\n")
	}
	b.WriteString("fragment F" + strconv.Itoa(levels) + " on Book { title }\n")
	return b.String()
}

// Documents the measuring cannot read are gqlgen's to refuse, with its own errors.
func TestDocumentsThatDoNotValidateAreLeftToValidation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, query, want string }{
		{"a syntax error", "{ version", "Expected Name, found <EOF>"},
		{"an unknown field", "{ books { pages { n } } }", `Cannot query field "pages" on type "Book".`},
		{"a fragment spread within itself", "{ books { ...R } } fragment R on Book { related { ...R } }", `Cannot spread fragment "R" within itself.`},
		{"an unknown fragment", "{ books { ...Nope } }", `Unknown fragment "Nope".`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			resp := run(context.Background(), newLibrary(t).executor(Defaults()), tc.query, nil)
			if len(resp.Errors) == 0 || !strings.Contains(resp.Errors[0].Message, tc.want) {
				t.Errorf("got %v, want a validation error %q", resp.Errors, tc.want)
			}
		})
	}
}

func TestDefaultsAreTheDocumentedOnes(t *testing.T) {
	t.Parallel()
	got := Defaults()
	want := Limits{Tokens: 5000, Depth: 12, Aliases: 30, RootFields: 20, Cost: 20000, ResponseBytes: 16 << 20}
	got.ListSizes, want.ListSizes = nil, nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

// The parser's own token limit is a backstop, so the extension counts as the parser does: a
// document at the limit gets through both.
func TestTheTokenCountAgreesWithTheParser(t *testing.T) {
	t.Parallel()
	for _, query := range []string{"{ version }", "# why\n{ version } # and why not\n", `query Q($n: Int = 3) { books(limit: $n) { title } }`} {
		n := countTokens(query)
		if _, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: query}, n); err != nil {
			t.Errorf("%q: got %v with the parser's limit at its %d tokens, want it parsed", query, err, n)
		}
		if _, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: query}, n-1); err == nil {
			t.Errorf("%q: got it parsed with the parser's limit at %d, want a refusal", query, n-1)
		}
	}
}

// ofType unwraps a list or non-null type; GraphiQL's introspection query nests it nine deep.
func TestOfTypeAddsNoLevel(t *testing.T) {
	t.Parallel()
	doc, err := parse(Limits{}, "{ __schema { types { ofType { ofType { ofType { name } } } } } }")
	if err != nil {
		t.Fatal(err)
	}
	if m := measure(newLibrary(t).schema, Limits{}, doc, "", nil); m.depth != 3 {
		t.Errorf("got depth %+v, want 3", m)
	}
}

// A cost limit set as high as a setting allows must not overflow into refusing everything
// (doubling it for the measuring's margin did); a limit beyond what the measuring walks still
// refuses what costs more.
func TestAHugeCostLimitStillMeasures(t *testing.T) {
	t.Parallel()
	lib := newLibrary(t)
	l := Defaults()
	l.Depth = 0
	for _, limit := range []int{math.MaxInt, 1 << 40} {
		l.Cost = limit
		if resp := run(context.Background(), lib.executor(l), "{ books(limit: 2) { title } }", nil); len(resp.Errors) > 0 {
			t.Errorf("a small query under a cost limit of %d: %v", limit, resp.Errors)
		}
	}
	// Thirty levels of related books, each spread twice: 10^30 by the assumed sizes.
	bomb := "{ books { ...F0 } }"
	for i := range 30 {
		bomb += fmt.Sprintf(" fragment F%d on Book { related { ...F%d ...F%d } }", i, i+1, i+1)
	}
	bomb += " fragment F30 on Book { title }"
	resp := run(context.Background(), lib.executor(l), bomb, nil)
	if len(resp.Errors) == 0 || !strings.Contains(resp.Errors[0].Message, "at most 1099511627776 is allowed (GRAPHQL_MAX_COST)") {
		t.Errorf("a fragment bomb under a cost limit of 2^40: %v, want it refused by its cost", resp.Errors)
	}
}

// Documents are parsed once and kept, but an operation is measured each time: its variables
// may size its lists.
func TestAKeptDocumentIsMeasuredWithEachRequestsVariables(t *testing.T) {
	t.Parallel()
	e := New(Limits{Cost: 1000})
	lib := newLibrary(t)
	if err := e.Validate(&graphql.ExecutableSchemaMock{SchemaFunc: func() *ast.Schema { return lib.schema }}); err != nil {
		t.Fatal(err)
	}
	query := `query($n: Int) { books(limit: $n) { title } }`
	for _, tc := range []struct {
		n       int
		refused bool
	}{{10, false}, {100000, true}, {10, false}} {
		err := e.MutateOperationParameters(context.Background(), &graphql.RawParams{Query: query, Variables: map[string]any{"n": tc.n}})
		if (err != nil) != tc.refused {
			t.Errorf("limit %d: got %v, want refused %v", tc.n, err, tc.refused)
		}
	}
}

// An operation no variable sizes costs the same on every request, so it is measured once per
// kept document, and a refusal stays word for word the same; one a variable sizes is measured
// each time (above).
func TestAnOperationNoVariableSizesIsMeasuredOnce(t *testing.T) {
	t.Parallel()
	e := New(Limits{Cost: 3})
	lib := newLibrary(t)
	if err := e.Validate(&graphql.ExecutableSchemaMock{SchemaFunc: func() *ast.Schema { return lib.schema }}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		query  string
		once   bool
		refuse string
	}{
		{`query A($n: Int) { books(limit: 2) { title } } query B($n: Int) { books(limit: $n) { title } }`, true, ""},
		{`query { books { title author } }`, true, "The operation costs 11; at most 3 is allowed (GRAPHQL_MAX_COST)"},
	} {
		var messages []string
		for range 3 {
			p := &graphql.RawParams{Query: tc.query, Variables: map[string]any{"n": 1}}
			if strings.HasPrefix(tc.query, "query A") {
				p.OperationName = "A"
			}
			err := e.MutateOperationParameters(context.Background(), p)
			messages = append(messages, fmt.Sprint(err))
		}
		if messages[0] != messages[1] || messages[1] != messages[2] {
			t.Errorf("%s: %q, want the same answer each time", tc.query, messages)
		}
		if tc.refuse != "" && !strings.Contains(messages[0], tc.refuse) {
			t.Errorf("%s: %q, want %q", tc.query, messages[0], tc.refuse)
		}
		d, _ := e.docs.Get(context.Background(), tc.query)
		_, kept := d.measured[""]
		if _, a := d.measured["A"]; a {
			kept = true
		}
		if kept != tc.once {
			t.Errorf("%s: measures kept %v, want %v", tc.query, kept, tc.once)
		}
		if _, b := d.measured["B"]; b {
			t.Errorf("%s: the measures of B, which a variable sizes, were kept", tc.query)
		}
	}
}

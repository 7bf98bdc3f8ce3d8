package gqlrun

import (
	"context"
	"slices"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

// Executions of one document with Plans collect the same fields as executions without them,
// whatever their variables: @skip and @include decide with a variable which fields are
// collected ("The @skip built-in directive may be provided for fields, fragment spreads, and
// inline fragments, and allows for conditional exclusion during execution as described by the
// if argument", GraphQL, 3.13.1), so a document whose directives take variables is collected
// per execution.
func TestPlansCollectWhatEachExecutionWould(t *testing.T) {
	t.Parallel()
	s := gqlparser.MustLoadSchema(&ast.Source{Name: "s.graphqls", Input: schema})
	plans := &Plans{}
	for _, tc := range []struct {
		name, query string
		vars        []map[string]any
		kept        bool
	}{
		{"no directives", `{ account { people { name files { name } } } }`, []map[string]any{nil, nil}, true},
		{"a literal @skip", `{ account { people { name @skip(if: true) files { name } } } }`, []map[string]any{nil, nil}, true},
		{"@include with a variable", `query($x: Boolean!) { account { people { name @include(if: $x) files { name } } } }`,
			[]map[string]any{{"x": true}, {"x": false}, {"x": true}}, false},
		{"@skip with a variable on a fragment spread", `query($x: Boolean!) { account { people { ...F @skip(if: $x) files { name } } } } fragment F on Person { name }`,
			[]map[string]any{{"x": false}, {"x": true}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, errs := gqlparser.LoadQuery(s, tc.query)
			if errs != nil {
				t.Fatal(errs)
			}
			people := doc.Operations[0].SelectionSet[0].(*ast.Field).SelectionSet[0].(*ast.Field)
			for _, vars := range tc.vars {
				want := aliases(graphql.CollectFields(&graphql.OperationContext{Doc: doc, Variables: vars}, people.SelectionSet, []string{"Person"}))
				op := &graphql.OperationContext{Doc: doc, Variables: vars}
				st := New() // a new execution
				st.Begin(WithPlans(graphql.WithOperationContext(context.Background(), op), plans))
				if got := aliases(st.Fields(op, people.SelectionSet, []string{"Person"})); !slices.Equal(got, want) {
					t.Fatalf("variables %v: collected %v, want %v", vars, got, want)
				}
			}
			_, kept := plans.getFields(people.SelectionSet, "Person")
			if kept != tc.kept {
				t.Errorf("fields kept for later executions: %v, want %v", kept, tc.kept)
			}
		})
	}
}

func aliases(fields []graphql.CollectedField) []string {
	var out []string
	for _, f := range fields {
		out = append(out, f.Alias)
	}
	return out
}

// Whether a selection set reaches a field that does I/O depends on the schema alone, so one
// execution's answer serves the next, which collected the same selections anew.
func TestPlansKeepWhetherASelectionReachesIO(t *testing.T) {
	t.Parallel()
	s := gqlparser.MustLoadSchema(&ast.Source{Name: "s.graphqls", Input: schema})
	doc, errs := gqlparser.LoadQuery(s, `{ account { people { files { url } } } }`)
	if errs != nil {
		t.Fatal(errs)
	}
	people := doc.Operations[0].SelectionSet[0].(*ast.Field).SelectionSet[0].(*ast.Field)
	plans := &Plans{}
	for range 2 {
		st := New()
		st.Begin(WithPlans(context.Background(), plans))
		// Each execution collects a selection set anew: the same nodes in another slice.
		if !st.ReachesIO(s, slices.Clone(people.SelectionSet), "Person", urlDoesIO) {
			t.Fatal("ReachesIO = false, want true")
		}
	}
	if reaches, kept := plans.getIO(people.SelectionSet, "Person"); !kept || !reaches {
		t.Errorf("kept %v, reaches %v; want the answer kept", kept, reaches)
	}
}

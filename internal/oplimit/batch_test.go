package oplimit

import (
	"context"
	"testing"

	"github.com/99designs/gqlgen/graphql"

	"github.com/advisorhq/gateway/internal/apperr"
)

// A batch is priced as one operation made of its operations: costs, root fields and aliases add
// up against the limits each operation met alone; depth does not add up, each document having
// been held to it alone.
func TestABatchIsPricedAsOneOperation(t *testing.T) {
	t.Parallel()
	// books(limit: 7) { title } costs 1 + 7 × 1 = 8.
	const eight = "{ books(limit: 7) { title } }"
	for _, tc := range []struct {
		name    string
		limits  Limits
		queries []string
		want    string // "" lets the batch run
	}{
		{"costs at the limit together", small(func(l *Limits) { l.Cost = 16 }), []string{eight, eight}, ""},
		{"costs past the limit together", small(func(l *Limits) { l.Cost = 16 }), []string{eight, eight, eight},
			"The batch's 3 operations cost 24 together; a batch may cost at most 16, as one operation may (GRAPHQL_MAX_COST)"},
		{"root fields past the limit together", small(func(l *Limits) { l.RootFields = 3 }), []string{"{ version books { title } }", "{ version shelves { total } }"},
			"The batch's 2 operations select 4 root fields together; a batch may select at most 3, as one operation may (GRAPHQL_MAX_ROOT_FIELDS)"},
		{"aliases past the limit together", small(func(l *Limits) { l.Aliases = 2 }), []string{"{ a: version b: version }", "{ c: version }"},
			"The batch's 2 operations have 3 aliases together; a batch may have at most 2, as one operation may (GRAPHQL_MAX_ALIASES)"},
		{"depth does not add up", small(func(l *Limits) { l.Depth = 2 }), []string{"{ books { title } }", "{ books { title } }", "{ books { title } }"}, ""},
		{"no limits", Limits{}, []string{eight, eight, eight}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			exec := newLibrary(t).executor(tc.limits)
			var ops []*graphql.OperationContext
			for _, q := range tc.queries {
				op, errs := exec.CreateOperationContext(graphql.StartOperationTrace(context.Background()), &graphql.RawParams{Query: q})
				if errs != nil {
					t.Fatalf("%s alone: %v", q, errs)
				}
				ops = append(ops, op)
			}
			err := Batch(ops)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || err.Message != tc.want || err.Extensions["code"] != apperr.OperationLimitExceeded):
				t.Errorf("got %v, want OPERATION_LIMIT_EXCEEDED %q", err, tc.want)
			}
		})
	}
}

// Operations the limits did not measure add nothing: there is nothing to price them by.
func TestABatchOfUnmeasuredOperationsPasses(t *testing.T) {
	t.Parallel()
	if err := Batch([]*graphql.OperationContext{{}, {}}); err != nil {
		t.Errorf("refused: %v", err)
	}
	if err := Batch(nil); err != nil {
		t.Errorf("an empty batch refused: %v", err)
	}
}

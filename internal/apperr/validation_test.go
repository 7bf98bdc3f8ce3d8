package apperr_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"

	"github.com/advisorhq/gateway/internal/apperr"
)

const testSchema = `
type Query { f(input: DocInput!, pick: Pick): Int }
enum Color { RED GREEN BLUE }
input DocInput { name: String!, color: Color, shares: [Share!] }
input Share { percentage: Float!, owners: [String!]! }
input Pick @oneOf { a: Int, b: String }
`

// validationErrors runs gqlparser as gqlgen does, literals first and then the variables, and
// gives the errors with the operation context the presenter sees.
func validationErrors(t *testing.T, schema *ast.Schema, query string, vars map[string]any) (context.Context, gqlerror.List) {
	t.Helper()
	doc, err := parser.ParseQuery(&ast.Source{Input: query})
	if err != nil {
		t.Fatal(err)
	}
	if errs := validator.Validate(schema, doc); len(errs) > 0 {
		for _, e := range errs {
			e.Extensions = map[string]any{"code": "GRAPHQL_VALIDATION_FAILED"}
		}
		return context.Background(), errs
	}
	opCtx := &graphql.OperationContext{Doc: doc, Operation: doc.Operations[0]}
	if _, err := validator.VariableValues(schema, doc.Operations[0], vars); err != nil {
		e := err.(*gqlerror.Error)
		e.Extensions = map[string]any{"code": "GRAPHQL_VALIDATION_FAILED"}
		return graphql.WithOperationContext(context.Background(), opCtx), gqlerror.List{e}
	}
	return nil, nil
}

func TestPresenterNamesTheFieldAndValuesOfValidationErrors(t *testing.T) {
	schema := gqlparser.MustLoadSchema(&ast.Source{Input: testSchema})
	const withVar = `query($input: DocInput!) { f(input: $input) }`
	for _, tc := range []struct {
		name, query       string
		vars              map[string]any
		want, withoutSchm string
	}{
		{"a literal enum value that is not one", `{ f(input: {name: "n", color: PINK}) }`, nil,
			`Value "PINK" does not exist in "Color" enum. Valid values: RED, GREEN, BLUE.`,
			`Value "PINK" does not exist in "Color" enum.`},
		{"a string for an enum", `{ f(input: {name: "n", color: "RED"}) }`, nil,
			`Enum "Color" cannot represent non-enum value: "RED". Did you mean the enum value "RED"? Valid values: RED, GREEN, BLUE.`,
			`Enum "Color" cannot represent non-enum value: "RED". Did you mean the enum value "RED"?`},
		{"a variable's enum value that is not one", withVar, map[string]any{"input": map[string]any{"name": "n", "color": "PINK"}},
			`Variable "$input" got an invalid value at "input.color"; Value "PINK" does not exist in "Color" enum. Valid values: RED, GREEN, BLUE.`,
			`Variable "$input" got an invalid value at "input.color"; Value "PINK" does not exist in "Color" enum.`},
		{"a variable without a required field", withVar, map[string]any{"input": map[string]any{}},
			`Variable "$input" got an invalid value at "input.name"; Field "DocInput.name" of required type "String!" was not provided.`,
			`Variable "$input" got an invalid value at "input.name"; Field "DocInput.name" of required type "String!" was not provided.`},
		{"a nested required field", withVar, map[string]any{"input": map[string]any{"name": "n", "shares": []any{map[string]any{"owners": []any{"a"}}}}},
			`Variable "$input" got an invalid value at "input.shares[0].percentage"; Field "Share.percentage" of required type "Float!" was not provided.`,
			`Variable "$input" got an invalid value at "input.shares[0].percentage"; Field "percentage" is required but was not provided.`},
		{"a required field sent as null", withVar, map[string]any{"input": map[string]any{"name": nil}},
			`Variable "$input" got an invalid value at "input.name"; Field "DocInput.name" of required type "String!" must not be null.`,
			`Variable "$input" got an invalid value at "input.name"; Field "DocInput.name" of required type "String!" must not be null.`},
		{"a field the input does not have", withVar, map[string]any{"input": map[string]any{"name": "n", "colour": "RED"}},
			`Variable "$input" got an invalid value at "input.colour"; Field "colour" is not defined by type "DocInput".`,
			`Variable "$input" got an invalid value at "input.colour"; Field "colour" is not defined by type "DocInput".`},
		{"a required variable left out", withVar, nil,
			`Variable "$input" of required type "DocInput!" was not provided.`,
			`Variable "$input" of required type "DocInput!" was not provided.`},
		{"a literal @oneOf with two members", `{ f(input: {name: "n"}, pick: {a: 1, b: "x"}) }`, nil,
			`OneOf Input Object "Pick" must specify exactly one key. Give exactly one of: a, b.`,
			`OneOf Input Object "Pick" must specify exactly one key.`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, errs := validationErrors(t, schema, tc.query, tc.vars)
			if len(errs) != 1 {
				t.Fatalf("got %d errors, want 1: %v", len(errs), errs)
			}
			for _, p := range []struct {
				present graphql.ErrorPresenterFunc
				want    string
			}{
				{apperr.Presenter(slog.New(slog.DiscardHandler), apperr.WithSchema(schema)), tc.want},
				{apperr.Presenter(slog.New(slog.DiscardHandler)), tc.withoutSchm},
			} {
				e := *errs[0]
				got := p.present(ctx, &e)
				if got.Message != p.want || got.Extensions["code"] != "GRAPHQL_VALIDATION_FAILED" {
					t.Errorf("got %s %q\nwant GRAPHQL_VALIDATION_FAILED %q", got.Extensions["code"], got.Message, p.want)
				}
			}
		})
	}
}

func TestBadEnumValueNamesTheValueMeant(t *testing.T) {
	e := apperr.BadEnumValue("DocumentCategory", "estate_planning", []string{"FAMILY", "ESTATE_PLANNING"})
	want := `Value "estate_planning" does not exist in "DocumentCategory" enum. Did you mean the enum value "ESTATE_PLANNING"?`
	if e.Code != apperr.BadUserInput || e.Message != want {
		t.Errorf("got %s %q, want BAD_USER_INPUT %q", e.Code, e.Message, want)
	}
}

package httpserver

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// oneOfVariables is the gateway's one @oneOf check, for the values GraphQL validation does not
// see. gqlparser holds a literal in the query to @oneOf, but not a variable's value, where
// {"trust": null, "individual": {...}} would pass as one member, and gqlgen's coercion of
// variables has no @oneOf rule. This extension runs right after that coercion, as the rest of
// it, and answers as validation does: GRAPHQL_VALIDATION_FAILED with gqlparser's words for the
// literal, at the path into the variable (the error presenter names the members). The domain
// packages trust what reaches them and do not check again.
type oneOfVariables struct{ schema *ast.Schema }

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = &oneOfVariables{}

func (*oneOfVariables) ExtensionName() string { return "OneOfVariables" }

func (o *oneOfVariables) Validate(s graphql.ExecutableSchema) error {
	o.schema = s.Schema()
	return nil
}

func (o *oneOfVariables) MutateOperationContext(_ context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	for _, def := range opCtx.Operation.VariableDefinitions {
		v, ok := opCtx.Variables[def.Variable]
		if !ok {
			continue
		}
		if path, input := checkOneOf(o.schema, def.Type, v, ast.Path{ast.PathName("variable"), ast.PathName(def.Variable)}); input != "" {
			err := gqlerror.ErrorPathf(path, `OneOf Input Object "%s" must specify exactly one key.`, input)
			errcode.Set(err, errcode.ValidationFailed)
			return err
		}
	}
	return nil
}

// checkOneOf returns where v, a value of t, breaks @oneOf and the input object it breaks; ""
// when it does not.
func checkOneOf(schema *ast.Schema, t *ast.Type, v any, path ast.Path) (ast.Path, string) {
	if v == nil || t == nil {
		return nil, ""
	}
	at := func(step ast.PathElement) ast.Path {
		return append(append(ast.Path{}, path...), step)
	}
	if t.Elem != nil {
		list, ok := v.([]any)
		if !ok {
			return checkOneOf(schema, t.Elem, v, path) // a single value coerces to a list
		}
		for i, item := range list {
			if p, input := checkOneOf(schema, t.Elem, item, at(ast.PathIndex(i))); input != "" {
				return p, input
			}
		}
		return nil, ""
	}
	def := schema.Types[t.NamedType]
	obj, ok := v.(map[string]any)
	if def == nil || def.Kind != ast.InputObject || !ok {
		return nil, ""
	}
	if def.Directives.ForName("oneOf") != nil {
		nulls := 0
		for _, val := range obj {
			if val == nil {
				nulls++
			}
		}
		if len(obj) != 1 || nulls > 0 {
			return path, def.Name
		}
	}
	for _, f := range def.Fields {
		if p, input := checkOneOf(schema, f.Type, obj[f.Name], at(ast.PathName(f.Name))); input != "" {
			return p, input
		}
	}
	return nil, ""
}

package httpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/advisorhq/gateway/internal/apperr"
)

// oneOfVariables holds variables to @oneOf: an input object of such a type must carry exactly
// one field, and not null. gqlparser checks literals in the query, but not the values of
// variables, where {"trust": null, "individual": {...}} would otherwise pass as one member.
func (d Deps) oneOfVariables(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	opCtx := graphql.GetOperationContext(ctx)
	schema := d.Schema.Schema()
	for _, def := range opCtx.Operation.VariableDefinitions {
		v, ok := opCtx.Variables[def.Variable]
		if !ok {
			continue
		}
		if field, msg := checkOneOf(schema, def.Type, v, def.Variable); msg != "" {
			err := &gqlerror.Error{Message: msg, Extensions: map[string]any{"code": apperr.BadUserInput, "field": field}}
			return graphql.OneShot(&graphql.Response{Errors: gqlerror.List{err}})
		}
	}
	return next(ctx)
}

// checkOneOf returns where v, a value of t, breaks @oneOf and how; "" when it does not.
func checkOneOf(schema *ast.Schema, t *ast.Type, v any, path string) (string, string) {
	if v == nil || t == nil {
		return "", ""
	}
	if t.Elem != nil {
		list, ok := v.([]any)
		if !ok {
			return checkOneOf(schema, t.Elem, v, path) // a single value coerces to a list
		}
		for i, item := range list {
			if field, msg := checkOneOf(schema, t.Elem, item, fmt.Sprintf("%s[%d]", path, i)); msg != "" {
				return field, msg
			}
		}
		return "", ""
	}
	def := schema.Types[t.NamedType]
	obj, ok := v.(map[string]any)
	if def == nil || def.Kind != ast.InputObject || !ok {
		return "", ""
	}
	if def.Directives.ForName("oneOf") != nil {
		nulls := 0
		for _, val := range obj {
			if val == nil {
				nulls++
			}
		}
		if len(obj) != 1 || nulls > 0 {
			return path, fmt.Sprintf("%s must have exactly one of %s", def.Name, fieldNames(def))
		}
	}
	for _, f := range def.Fields {
		if field, msg := checkOneOf(schema, f.Type, obj[f.Name], path+"."+f.Name); msg != "" {
			return field, msg
		}
	}
	return "", ""
}

func fieldNames(def *ast.Definition) string {
	names := make([]string, len(def.Fields))
	for i, f := range def.Fields {
		names[i] = f.Name
	}
	return strings.Join(names, ", ")
}

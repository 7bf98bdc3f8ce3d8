package httpserver

import (
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/validator/core"
)

// introspectionOff refuses `__schema` and `__type` while validating, when the operator has
// switched introspection off. Left to the executor, gqlgen answers them with a bare error that
// the presenter can only call INTERNAL and log as the gateway's fault; a disabled feature is
// the caller's problem, so it is a validation error naming what is off, and the operation does
// not run. `__typename` stays: clients and caches need it, and it tells nothing of the schema.
var introspectionOff = core.Rule{
	Name: "IntrospectionDisabled",
	RuleFunc: func(observers *core.Events, addError core.AddErrFunc) {
		observers.OnField(func(_ *core.Walker, field *ast.Field) {
			if field.Name == "__schema" || field.Name == "__type" {
				addError(
					core.Message(`Introspection is disabled on this gateway: "%s" is not served.`, field.Name),
					core.At(field.Position),
				)
			}
		})
	},
}

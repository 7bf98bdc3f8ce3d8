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

// federationOff refuses the federation's `_service` and `_entities` while validating, when the
// gateway is not serving as a subgraph: `_service.sdl` is the whole schema, which only a
// federation's router has a use for, and the operator may have switched introspection off.
// Like introspection's, a disabled feature is a validation error naming what is off.
var federationOff = core.Rule{
	Name: "FederationDisabled",
	RuleFunc: func(observers *core.Events, addError core.AddErrFunc) {
		observers.OnField(func(w *core.Walker, field *ast.Field) {
			if (field.Name == "_service" || field.Name == "_entities") && field.ObjectDefinition != nil && field.ObjectDefinition == w.Schema.Query {
				addError(
					core.Message(`Federation is disabled on this gateway (GRAPHQL_FEDERATION): "%s" is not served.`, field.Name),
					core.At(field.Position),
				)
			}
		})
	},
}

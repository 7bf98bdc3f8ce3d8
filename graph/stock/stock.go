// Package stock is the executor gqlgen's own templates generate from the gateway's schema and
// configuration, over graph's resolvers: the reference that graph's differential test holds
// the gateway's executor (rendered by internal/execgen from changed templates) to. Only tests
// use it.
package stock

import (
	"github.com/99designs/gqlgen/graphql"

	"github.com/advisorhq/gateway/graph"
	"github.com/advisorhq/gateway/graph/stock/generated"
)

//go:generate go run gen.go

// NewExecutableSchema is gqlgen's stock executor over r's resolvers.
func NewExecutableSchema(r *graph.Resolver) graphql.ExecutableSchema {
	return generated.NewExecutableSchema(generated.Config{Resolvers: roots{r}})
}

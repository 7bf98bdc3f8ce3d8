// Package httpserver builds the gateway's HTTP handler: the GraphQL endpoint, the IDE and the
// health checks, with every dependency passed in.
package httpserver

import (
	"log/slog"
	"net/http"

	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/99designs/gqlgen/graphql/playground"

	"github.com/advisorhq/gateway/graph"
	"github.com/advisorhq/gateway/graph/generated"
)

// Deps are what the gateway's handler needs.
type Deps struct {
	Log     *slog.Logger
	Version string
}

// New returns the gateway's handler.
func New(deps Deps) http.Handler {
	schema := generated.NewExecutableSchema(generated.Config{Resolvers: &graph.Resolver{Version: deps.Version}})
	gql := handler.New(schema)
	gql.AddTransport(transport.Options{})
	gql.AddTransport(transport.GET{})
	gql.AddTransport(transport.POST{})
	gql.Use(extension.Introspection{})

	mux := http.NewServeMux()
	mux.Handle("/graphql", gql)
	mux.Handle("GET /{$}", playground.Handler("Advisor GraphQL gateway", "/graphql"))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	return mux
}

// Package graph holds the GraphQL resolvers. They stay thin: each maps its arguments, calls one
// function of a domain package under internal/, and returns.
package graph

//go:generate go run github.com/99designs/gqlgen generate

// Resolver carries the resolvers' dependencies; server.go builds it and passes everything in.
type Resolver struct {
	Version string
}

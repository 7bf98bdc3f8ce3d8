// Package model holds the GraphQL types that no domain package under internal/ provides;
// gqlgen generates them into models_gen.go.
package model

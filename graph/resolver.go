// Package graph holds the GraphQL resolvers. They stay thin: each maps its arguments, calls one
// function of a domain package under internal/, and returns.
package graph

import (
	"github.com/advisorhq/gateway/internal/advisor"
	"github.com/advisorhq/gateway/internal/eventhub"
	"github.com/advisorhq/gateway/internal/family"
	"github.com/advisorhq/gateway/internal/vault"
)

//go:generate go run github.com/99designs/gqlgen generate

// Resolver carries the resolvers' dependencies; server.go builds it and passes everything in.
type Resolver struct {
	Version string
	Family  *family.Service
	Vault   *vault.Service
	// Hub streams the webhook events to subscribers and answers recentEvents.
	Hub *eventhub.Hub
}

// clientRef addresses a v1 client from a query's arguments.
func clientRef(ref string, advisorID, teamID *string) advisor.ClientRef {
	out := advisor.ClientRef{Ref: ref}
	if advisorID != nil {
		out.AdvisorID = *advisorID
	}
	if teamID != nil {
		out.TeamID = *teamID
	}
	return out
}

// orDefault gives an argument that was sent as an explicit null its default.
func orDefault(v *int, def int) int {
	if v == nil {
		return def
	}
	return *v
}

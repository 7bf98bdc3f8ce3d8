// Package graph holds the GraphQL resolvers. They stay thin: each maps its arguments, calls one
// function of a domain package under internal/, and returns.
package graph

import (
	"context"
	"slices"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/advisorhq/gateway/internal/advisor"
	"github.com/advisorhq/gateway/internal/analysis"
	"github.com/advisorhq/gateway/internal/assistant"
	"github.com/advisorhq/gateway/internal/eventhub"
	"github.com/advisorhq/gateway/internal/family"
	"github.com/advisorhq/gateway/internal/referral"
	"github.com/advisorhq/gateway/internal/tenant"
	"github.com/advisorhq/gateway/internal/vault"
)

//go:generate go run ../internal/execgen

// Resolver carries the resolvers' dependencies; server.go builds it and passes everything in.
type Resolver struct {
	Version string
	Family  *family.Service
	Vault   *vault.Service
	// Analysis starts document analyses and tells a document's from the stored events.
	Analysis *analysis.Service
	// Hub streams the webhook events to subscribers and answers recentEvents.
	Hub *eventhub.Hub
	// Bulk checks and runs bulk loads.
	Bulk Bulk
	// Referral refers clients to the referral service; nil answers that referrals are off.
	Referral *referral.Service
	// Assistant mints the chat assistant's session tokens for the caller.
	Assistant *assistant.Sessions
	// Access says whom a caller may act for on the v1 paths.
	Access *tenant.Policy
}

// clientRef addresses a v1 client for the caller: as the advisor and team of its token unless
// the arguments name others, which needs the firm-admin role.
func (r *Resolver) clientRef(ctx context.Context, ref string, advisorID, teamID *string) (advisor.ClientRef, error) {
	a, t, err := r.Access.ActingFor(ctx, deref(advisorID), deref(teamID))
	if err != nil {
		return advisor.ClientRef{}, err
	}
	return advisor.ClientRef{Ref: ref, AdvisorID: a, TeamID: t}, nil
}

// firmOf is the id of the firm the request acts for; "" (which the event hub serves nothing
// of) when none was admitted.
func firmOf(ctx context.Context) string {
	if f, ok := tenant.FromContext(ctx); ok {
		return f.ID
	}
	return ""
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// orDefault gives an argument that was sent as an explicit null its default.
func orDefault(v *int, def int) int {
	if v == nil {
		return def
	}
	return *v
}

// reachesGraph reports whether the field being resolved, which returns a contact card read on
// its own, selects at any depth a card's relationships or a reference's contact: what its
// owner's roster answers. The root field lists the roster then, once, so that the fields
// below it answer from memory without a context, a goroutine or a wait.
func reachesGraph(ctx context.Context) bool {
	return selects(graphql.GetFieldContext(ctx).Field.SelectionSet, "relationships", "contact")
}

// selects reports whether set selects a field of one of these names at any depth, through
// inline fragments and fragment spreads.
func selects(set ast.SelectionSet, names ...string) bool {
	for _, s := range set {
		var sub ast.SelectionSet
		switch s := s.(type) {
		case *ast.Field:
			if slices.Contains(names, s.Name) {
				return true
			}
			sub = s.SelectionSet
		case *ast.InlineFragment:
			sub = s.SelectionSet
		case *ast.FragmentSpread:
			if s.Definition != nil {
				sub = s.Definition.SelectionSet
			}
		}
		if selects(sub, names...) {
			return true
		}
	}
	return false
}

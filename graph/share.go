package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"

	"github.com/advisorhq/gateway/internal/callerauth"
	"github.com/advisorhq/gateway/internal/eventhub"
)

// ShareEvents lets live `events` subscriptions share one execution: every subscriber of the same
// document, variables and caller sees the same events, from whenever it joins. A subscription
// that resumes `after` an id is not shared, since its first events are its own; nor is any
// other subscription, whose first answer may be a snapshot of the moment it began. The scope is
// the caller: the documents an event links to are read on the caller's behalf. While the hub
// cannot serve, nothing is shared, so a new subscriber is turned away as it would be alone
// rather than joining subscribers who wait out the outage.
func ShareEvents(hub *eventhub.Hub) func(ctx context.Context, opCtx *graphql.OperationContext) (string, bool) {
	return func(ctx context.Context, opCtx *graphql.OperationContext) (string, bool) {
		scope, ok := eventsScope(ctx, opCtx)
		if !ok || hub.Ready(ctx) != nil {
			return "", false
		}
		return scope, true
	}
}

func eventsScope(ctx context.Context, opCtx *graphql.OperationContext) (string, bool) {
	fields := graphql.CollectFields(opCtx, opCtx.Operation.SelectionSet, []string{"Subscription"})
	if len(fields) != 1 || fields[0].Name != "events" {
		return "", false
	}
	if after := fields[0].ArgumentMap(opCtx.Variables)["after"]; after != nil {
		return "", false
	}
	// The admitted firm, not the token's claim alone: it is what every read is made with.
	c, _ := callerauth.FromContext(ctx)
	return firmOf(ctx) + "\x00" + c.AdvisorID, true
}

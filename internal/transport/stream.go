package transport

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/advisorhq/gateway/internal/transport/fanout"
)

// isSubscription reports whether opCtx is a subscription, which streams.
func isSubscription(opCtx *graphql.OperationContext) bool {
	return opCtx.Operation != nil && opCtx.Operation.Operation == ast.Subscription
}

// refuseOperation answers an operation that cannot be executed with errs, its only response.
func refuseOperation(ctx context.Context, exec graphql.GraphExecutor, opCtx *graphql.OperationContext, errs gqlerror.List,
	emit func(resp *graphql.Response, final bool) bool,
) fanout.Outcome {
	resp := exec.DispatchError(graphql.WithOperationContext(ctx, opCtx), errs)
	if !emit(resp, true) {
		return fanout.Gone
	}
	return fanout.Failed
}

// runCreated is runOperation for an operation already parsed and validated.
func runCreated(ctx context.Context, exec graphql.GraphExecutor, opCtx *graphql.OperationContext,
	emit func(resp *graphql.Response, final bool) bool,
) fanout.Outcome {
	responses, ctx := exec.DispatchOperation(ctx, opCtx)
	for {
		resp := responses(ctx)
		if ctx.Err() != nil {
			return fanout.Gone
		}
		if resp == nil {
			return fanout.Done
		}
		outcome, final := fanout.Ending(resp)
		if !emit(resp, final) {
			return fanout.Gone
		}
		if final {
			return outcome
		}
	}
}

package transport

import (
	"net/http"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// executeOnce runs an operation whose answer is one response, and writes it as GraphQL over
// HTTP specifies, whichever transport read the parameters (a JSON body, a query string, a
// multipart form), so that the same request gets the same status from each.
func executeOnce(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor, params *graphql.RawParams) {
	media := responseMedia(r.Header.Get("Accept"))
	w.Header().Set("Content-Type", media+"; charset=utf-8")
	// A request that cannot be executed: application/json says so in the body with 200,
	// application/graphql-response+json with 400; neither has a "data" entry.
	notExecuted := http.StatusOK
	if media == mediaGraphQLResponse {
		notExecuted = http.StatusBadRequest
	}

	ctx := r.Context()
	opCtx, errs := exec.CreateOperationContext(ctx, params)
	if errs != nil {
		resp := exec.DispatchError(graphql.WithOperationContext(ctx, opCtx), errs)
		requestError(w, notExecuted, resp.Errors)
		return
	}
	if r.Method == http.MethodGet {
		if op := opCtx.Doc.Operations.ForName(opCtx.OperationName); op != nil && op.Operation != ast.Query {
			w.Header().Set("Allow", http.MethodPost)
			requestError(w, http.StatusMethodNotAllowed,
				gqlerror.List{gqlerror.Errorf("GET serves queries only: send %s operations with POST", op.Operation)})
			return
		}
	}
	if opCtx.Operation.Operation == ast.Subscription {
		requestError(w, notExecuted, gqlerror.List{gqlerror.Errorf(
			"Subscriptions stream: open a WebSocket (graphql-transport-ws) or send Accept: text/event-stream (graphql-sse)")})
		return
	}
	responses, ctx := exec.DispatchOperation(ctx, opCtx)
	resp := responses(ctx)
	if r.Context().Err() != nil {
		return // the client went away: nobody reads what would be written
	}
	writeResponse(w, resp)
}

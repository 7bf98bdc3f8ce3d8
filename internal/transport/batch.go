package transport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/gqlrun"
)

// batch serves a POST whose body is an array of operations, as Apollo's BatchHttpLink sends
// them: each runs as if it came alone, through every limit, one after another so that a
// batch costs no more at once than one operation does, and the answer is the array of their
// responses in the same order. One that cannot run has a response of errors in its place;
// the others run anyway.
func (t jsonTransport) batch(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor, body []byte) {
	if t.batchLimit <= 0 {
		requestError(w, http.StatusBadRequest, gqlerror.List{gqlerror.Errorf(
			"Batched requests are off: send one operation per request, or set GRAPHQL_BATCH_LIMIT")})
		return
	}
	var items []json.RawMessage
	if err := decodeJSON(bytes.NewReader(body), &items); err != nil {
		requestError(w, http.StatusBadRequest, gqlerror.List{gqlerror.Errorf(
			"the request body must be a JSON object, or an array of them for a batch")})
		return
	}
	switch {
	case len(items) == 0:
		requestError(w, http.StatusBadRequest, gqlerror.List{gqlerror.Errorf("the batch is empty: send at least one operation")})
		return
	case len(items) > t.batchLimit:
		requestError(w, http.StatusBadRequest, gqlerror.List{gqlerror.Errorf(
			"the batch holds %d operations; at most %d are allowed (GRAPHQL_BATCH_LIMIT)", len(items), t.batchLimit)})
		return
	}
	out := []byte{'['}
	for i, item := range items {
		if r.Context().Err() != nil {
			return // the client went away: nobody reads the rest
		}
		resp := t.batchItem(r, exec, item)
		if i > 0 {
			out = append(out, ',')
		}
		b, err := json.Marshal(resp)
		if err != nil {
			b = fmt.Appendf(nil, `{"errors":[{"message":"the response could not be encoded","extensions":{"code":%q}}]}`, apperr.Internal)
		}
		out = append(out, b...)
	}
	out = append(out, ']', '\n')
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out) // the client went away; nothing to tell it
}

// batchItem runs one operation of a batch and returns its response.
func (t jsonTransport) batchItem(r *http.Request, exec graphql.GraphExecutor, item json.RawMessage) any {
	var raw rawParams
	var params *graphql.RawParams
	err := decodeJSON(bytes.NewReader(item), &raw)
	if err == nil {
		params, err = raw.params()
	} else {
		err = fmt.Errorf("each operation of a batch must be a JSON object whose query, operationName and documentId are strings and whose variables and extensions are objects")
	}
	if err != nil {
		return notExecuted(gqlerror.List{gqlerror.Errorf("%s", err.Error())})
	}
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: graphql.Now(), End: graphql.Now()}
	ctx := r.Context()
	opCtx, errs := exec.CreateOperationContext(ctx, params)
	if errs != nil {
		return notExecuted(exec.DispatchError(graphql.WithOperationContext(ctx, opCtx), errs).Errors)
	}
	if opCtx.Operation.Operation == ast.Subscription {
		return notExecuted(gqlerror.List{gqlerror.Errorf(
			"Subscriptions stream: they cannot be batched; open a WebSocket (graphql-transport-ws) or send Accept: text/event-stream (graphql-sse)")})
	}
	responses, ctx := exec.DispatchOperation(gqlrun.WithDeferredPlaceholders(ctx), opCtx)
	resp := responses(ctx)
	if deferred(resp) {
		resp = mergeDeferred(ctx, resp, responses)
	}
	return resp
}

// notExecuted is the response of an operation that did not run: errors, each with a code, and
// no "data" entry, as GraphQL over HTTP answers a request that was not executed.
func notExecuted(errs gqlerror.List) any {
	return struct {
		Errors gqlerror.List `json:"errors"`
	}{withCodes(errs)}
}

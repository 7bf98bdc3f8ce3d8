package transport

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/gqlrun"
	"github.com/advisorhq/gateway/internal/oplimit"
)

// Refusals of a batch as a whole.
var (
	errBatchesOff = errors.New("Batched requests are off: send one operation per request, or set GRAPHQL_BATCH_LIMIT")
	errBadBatch   = errors.New("the request body must be a JSON object, or an array of them for a batch")
	errEmptyBatch = errors.New("the batch is empty: send at least one operation")
)

// batch serves a POST whose body is an array of operations, as Apollo's BatchHttpLink sends
// them. Each is checked as if it came alone, through every limit, and then the batch as a
// whole is priced against the operation limits, as one operation made of them would be,
// before any runs: a batch may ask no more than one operation may. They run one after
// another, so that a batch costs no more at once than one operation does, and the answer is
// the array of their responses in the same order, each written as it is ready. One that cannot
// run has a response of errors in its place; the others run anyway.
func (t jsonTransport) batch(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor, body []byte) {
	if t.cfg.BatchLimit <= 0 {
		refuse(w, r, t.cfg.CountRefused, http.StatusBadRequest, errBatchesOff)
		return
	}
	// The bytes first: a batch of more than BatchLimit operations is refused at the first one
	// too many, and nothing is decoded until the whole body is known to be within bounds.
	if err := scanBatch(body, t.cfg.BodyBounds, t.cfg.BatchLimit); err != nil {
		if errors.Is(err, errNotJSON) {
			err = errBadBatch
		}
		refuse(w, r, t.cfg.CountRefused, http.StatusBadRequest, err)
		return
	}
	var items []json.RawMessage
	if err := decodeJSON(bytes.NewReader(body), &items); err != nil {
		refuse(w, r, t.cfg.CountRefused, http.StatusBadRequest, errBadBatch)
		return
	}
	if len(items) == 0 {
		refuse(w, r, t.cfg.CountRefused, http.StatusBadRequest, errEmptyBatch)
		return
	}
	ops := make([]batchOp, len(items))
	admitted := make([]*graphql.OperationContext, 0, len(items))
	for i, item := range items {
		if r.Context().Err() != nil {
			return // the client went away: nobody reads the answer
		}
		ops[i] = prepareBatchItem(r, exec, item)
		if ops[i].op != nil {
			admitted = append(admitted, ops[i].op)
		}
	}
	if err := oplimit.Batch(admitted); err != nil {
		// Each operation was counted against the rate limits as it was checked.
		requestError(w, http.StatusBadRequest, gqlerror.List{err})
		return
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte{'['}) // the client went away; the context says so below
	for i, o := range ops {
		if r.Context().Err() != nil {
			return // the client went away: nobody reads the rest
		}
		resp := o.resp
		if o.op != nil {
			resp = runBatchItem(r, exec, o.op)
		}
		b, err := json.Marshal(resp)
		if err != nil {
			b = fmt.Appendf(nil, `{"errors":[{"message":"the response could not be encoded","extensions":{"code":%q}}]}`, apperr.Internal)
		}
		if i > 0 {
			b = append([]byte{','}, b...)
		}
		_, _ = w.Write(b)
	}
	_, _ = w.Write([]byte("]\n"))
}

// batchOp is one operation of a batch, checked: ready to run, or its response of errors.
type batchOp struct {
	op   *graphql.OperationContext
	resp any
}

// prepareBatchItem checks one operation of a batch as if it came alone: parsed, validated,
// measured and counted, everything but run.
func prepareBatchItem(r *http.Request, exec graphql.GraphExecutor, item json.RawMessage) batchOp {
	var raw rawParams
	var params *graphql.RawParams
	err := decodeParams(item, &raw)
	if err == nil {
		params, err = raw.params()
	} else {
		err = fmt.Errorf("each operation of a batch must be a JSON object whose query, operationName and documentId are strings and whose variables and extensions are objects")
	}
	if err != nil {
		return batchOp{resp: notExecuted(gqlerror.List{gqlerror.Errorf("%s", err.Error())})}
	}
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: graphql.Now(), End: graphql.Now()}
	ctx := r.Context()
	opCtx, errs := exec.CreateOperationContext(ctx, params)
	if errs != nil {
		return batchOp{resp: notExecuted(exec.DispatchError(graphql.WithOperationContext(ctx, opCtx), errs).Errors)}
	}
	if opCtx.Operation.Operation == ast.Subscription {
		return batchOp{resp: notExecuted(gqlerror.List{gqlerror.Errorf(
			"Subscriptions stream: they cannot be batched; open a WebSocket (graphql-transport-ws) or send Accept: text/event-stream (graphql-sse)")})}
	}
	return batchOp{op: opCtx}
}

// runBatchItem runs one checked operation of a batch and returns its response.
func runBatchItem(r *http.Request, exec graphql.GraphExecutor, opCtx *graphql.OperationContext) any {
	responses, ctx := exec.DispatchOperation(gqlrun.WithDeferredPlaceholders(r.Context()), opCtx)
	resp := responses(ctx)
	if deferred(resp) {
		resp = mergeDeferred(ctx, resp, responses)
	}
	return resp
}

package transport

import (
	"fmt"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/gqlrun"
)

// executeOnce runs an operation whose answer is one response, and writes it as GraphQL over
// HTTP specifies, whichever transport read the parameters (a JSON body, a query string, a
// multipart form), so that the same request gets the same status from each. A query named by
// id over GET may be cached by its client for persistedMaxAge. cfg gives the plans and workers
// executions share.
func executeOnce(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor, params *graphql.RawParams, persistedMaxAge time.Duration, cfg *Config) {
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
		if se, ok := statusOf(errs); ok {
			answerStatus(w, se, resp.Errors)
			return
		}
		if hasCode(resp.Errors, apperr.PersistedQueryNotFound) {
			// The answer changes as soon as the client sends the document, which it does next:
			// no cache may keep it, or a CDN in front of GET by id would answer the miss again
			// for as long as it keeps answers without a Cache-Control.
			w.Header().Set("Cache-Control", "no-store")
		}
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
	// The response ends with the request, so its field contexts may be allocated together;
	// what planning it works out is kept for the requests that send the same document.
	ctx = gqlrun.WithPlans(gqlrun.WithContexts(ctx), cfg.plans)
	if cfg.Workers != nil {
		ctx = gqlrun.WithWorkers(ctx, cfg.Workers)
	}
	multipart := acceptsMultipart(r)
	if !multipart {
		ctx = gqlrun.WithDeferredPlaceholders(ctx) // merged below, fields in their places
	}
	ctx, release := gqlrun.WithResponseBuffer(ctx)
	responses, ctx := exec.DispatchOperation(ctx, opCtx)
	resp := responses(ctx)
	if r.Context().Err() != nil {
		return // the client went away: nobody reads what would be written
	}
	if deferred(resp) {
		if multipart {
			w.Header().Set("Cache-Control", "no-store")
			writeIncremental(ctx, w, resp, responses)
			return
		}
		resp = mergeDeferred(ctx, resp, responses)
	}
	setCaching(w.Header(), r.Method, opCtx.Operation.Operation, persistedID(params), len(resp.Errors) == 0, persistedMaxAge)
	writeResponse(w, resp)
	release() // written, and held by nothing (a deferred response's parts are all merged into it by now)
}

// setCaching says how a response may be cached. A query named by id over GET, answered
// without errors, may be kept by its client for maxAge: its URL names the document and its
// variables, so it is the same request each time, as CDNs and HTTP caches need. The answer is
// the caller's own, so only the caller's cache may keep it (private), and it varies with the
// caller's credentials. A mutation's answer is never kept.
func setCaching(h http.Header, method string, op ast.Operation, byID, clean bool, maxAge time.Duration) {
	switch {
	case op == ast.Mutation:
		h.Set("Cache-Control", "no-store")
	case method == http.MethodGet && op == ast.Query && byID && clean && maxAge > 0:
		h.Set("Cache-Control", fmt.Sprintf("private, max-age=%d", int(maxAge.Seconds())))
		h.Add("Vary", "Authorization")
		h.Add("Vary", "Accept")
	}
}

// responseMedia picks the response's media type from the Accept header: the first of the two
// GraphQL types it names, application/json for */* or no Accept at all.
func responseMedia(accept string) string {
	for part := range strings.SplitSeq(accept, ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mt {
		case mediaGraphQLResponse:
			return mediaGraphQLResponse
		case mediaJSON, "application/*", "*/*":
			return mediaJSON
		}
	}
	return mediaJSON
}

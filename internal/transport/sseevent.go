package transport

import (
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/advisorhq/gateway/internal/transport/fanout"
)

// The events of graphql-sse, as both SSE streams write them.

const sseNextPrefix = "event: next\ndata: "

var (
	sseComplete  = []byte("event: complete\ndata: \n\n")
	sseKeepAlive = []byte(": keep-alive\n\n")
	// sseExpired ends a stream whose caller's token expired: a `next` carrying the error, then
	// `complete`, so that a graphql-sse client does not retry with the same token.
	sseExpired = append(
		append([]byte(sseNextPrefix), mustJSON(map[string]any{"errors": gqlerror.List{expiredError()}})...),
		append([]byte("\n\n"), sseComplete...)...)
)

// sseEvent is r as a `next` event, made once for all SSE members.
func sseEvent(r *fanout.Result) []byte { return r.SSE.Of(r.JSON, encodeSSENext) }

func encodeSSENext(json []byte) []byte {
	b := make([]byte, 0, len(json)+len(sseNextPrefix)+2)
	b = append(b, sseNextPrefix...)
	b = append(b, json...)
	return append(b, '\n', '\n')
}

package advisor

import (
	"context"

	"github.com/advisorhq/gateway/internal/memo"
)

// requestCache makes identical reads of one GraphQL request once: the first caller fetches,
// later and concurrent ones share its answer. It lives only as long as the request. The
// answers are raw bodies: each caller decodes its own copy.
type requestCache = memo.Group[string, []byte]

type cacheKey struct{}

// WithRequestCache returns a context whose reads through any Client are made once per
// distinct address. Install it per request: a write clears it, but nothing else expires it.
func WithRequestCache(ctx context.Context) context.Context {
	return context.WithValue(ctx, cacheKey{}, &requestCache{})
}

func cacheFrom(ctx context.Context) *requestCache {
	c, _ := ctx.Value(cacheKey{}).(*requestCache)
	return c
}

package advisor

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/advisorhq/gateway/internal/apperr"
)

// Cache is one GraphQL request's memory of the Advisor service, and the only one it has. The
// client keeps every read's answer in it (the raw body: each caller decodes its own copy); the
// domains keep there what they work out from those answers, such as an owner's indexed roster,
// each under a key type of its own. The first caller of a key computes its value, and later and
// concurrent callers share it, so identical reads of one request are made once. A write through
// the client clears all of it, once, in one place (Invalidate), so nothing read before a write
// is served after it. Install one per operation and one per subscription event (WithCache).
type Cache struct {
	mu      sync.Mutex
	entries map[any]*entry
}

type entry struct {
	done  chan struct{}
	value any
	err   error
}

type cacheKey struct{}

// WithCache returns a context carrying a fresh Cache. Every read through a Client, and every
// Memo, needs one.
func WithCache(ctx context.Context) context.Context {
	return context.WithValue(ctx, cacheKey{}, &Cache{})
}

func cacheFrom(ctx context.Context) *Cache {
	c, _ := ctx.Value(cacheKey{}).(*Cache)
	return c
}

// ErrNoCache is the cause of the INTERNAL error a read meets when its context carries no Cache:
// the HTTP handler (or the subscription) did not install one. It fails rather than reading
// without one, since a read per caller silently turns one upstream call into N and spends the
// operation's upstream budget.
var ErrNoCache = errors.New("no per-request cache in the context (advisor.WithCache was not called)")

// Memo returns the request's value for key, calling compute if no caller has; callers that
// arrive while it runs wait for it, and a compute that fails shares its error the same way.
// key must be comparable; use an unexported type per use so keys of different packages never
// meet. Without a Cache in ctx it fails with INTERNAL, whose cause names ErrNoCache.
func Memo[V any](ctx context.Context, key any, compute func() (V, error)) (V, error) {
	c := cacheFrom(ctx)
	if c == nil {
		var zero V
		return zero, apperr.Wrap(apperr.Internal, "Internal error", fmt.Errorf("%T: %w", key, ErrNoCache))
	}
	v, err := c.do(key, func() (any, error) { return compute() })
	out, _ := v.(V)
	return out, err
}

// Invalidate forgets everything the request's cache holds, so what the request reads next
// sees a write it made. Computations under way finish for the callers waiting on them. With no
// Cache in ctx there is nothing to forget.
func Invalidate(ctx context.Context) {
	if c := cacheFrom(ctx); c != nil {
		c.mu.Lock()
		c.entries = nil
		c.mu.Unlock()
	}
}

func (c *Cache) do(key any, compute func() (any, error)) (any, error) {
	c.mu.Lock()
	if c.entries == nil {
		c.entries = map[any]*entry{}
	}
	e, ok := c.entries[key]
	if !ok {
		e = &entry{done: make(chan struct{})}
		c.entries[key] = e
	}
	c.mu.Unlock()
	if ok {
		<-e.done
		return e.value, e.err
	}
	finished := false
	defer func() {
		if !finished { // compute panicked: release the waiters before the panic goes on up
			e.err = apperr.Wrap(apperr.Internal, "Internal error", fmt.Errorf("%T: the computation panicked", key))
			close(e.done)
		}
	}()
	e.value, e.err = compute()
	finished = true
	close(e.done)
	return e.value, e.err
}

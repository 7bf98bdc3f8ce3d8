package callerauth

import "context"

type callerKey struct{}

// WithCaller returns ctx carrying the caller a transport has authenticated, so that resolvers
// act for that caller (mint its assistant session, count its rate limit) and never for ids a
// request names.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// FromContext is the caller WithCaller put in ctx. ok is false when nobody authenticated the
// request: the gateway runs with AUTH_DISABLED behind something else that does.
func FromContext(ctx context.Context) (c Caller, ok bool) {
	c, ok = ctx.Value(callerKey{}).(Caller)
	return c, ok
}

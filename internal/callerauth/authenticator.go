package callerauth

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
)

// Authenticator is what the transports call for each request (and each WebSocket's
// connection_init): it verifies the caller's token and puts the caller in the context.
type Authenticator struct {
	Verifier *Verifier
	// Anonymous, when set, is who a request with no Authorization header at all acts as: the
	// embedded sandbox's demo advisor, so that the IDE works with no setup. A credential that
	// is sent and wrong is refused all the same: a mistyped token must not quietly act as
	// someone else.
	Anonymous *Caller
	// Log receives one line per refusal, with its reason; never the token.
	Log *slog.Logger
}

// ErrCredentialsExpired is the cause of a context Authenticate returned that ended because the
// token it was made from ran out.
var ErrCredentialsExpired = errors.New("the caller's token has expired")

// Authenticate returns ctx with the caller the headers' bearer token names, or an *Error. The
// context ends when the token does (its exp, with the verifier's leeway), so a WebSocket or
// an SSE stream does not outlive the credentials it was opened with.
func (a *Authenticator) Authenticate(ctx context.Context, h http.Header) (context.Context, error) {
	c, err := a.Verifier.FromHeader(ctx, h)
	if err == nil {
		authed := WithCaller(ctx, c)
		if !c.ExpiresAt.IsZero() {
			var cancel context.CancelFunc
			authed, cancel = context.WithDeadlineCause(authed, c.ExpiresAt.Add(a.Verifier.cfg.Leeway), ErrCredentialsExpired)
			// The deadline's timer is released when ctx ends, by this or by cancellation.
			context.AfterFunc(ctx, cancel)
		}
		return authed, nil
	}
	if a.Anonymous != nil && errors.Is(err, ErrNoAuthorization) {
		return WithCaller(ctx, *a.Anonymous), nil
	}
	if a.Log != nil {
		var e *Error
		if errors.As(err, &e) {
			level := slog.LevelInfo
			if !e.CallerFault() {
				level = slog.LevelWarn
			}
			a.Log.Log(ctx, level, "caller refused", "reason", string(e.Reason), "detail", e.Detail)
		} else {
			a.Log.WarnContext(ctx, "caller refused", "error", err)
		}
	}
	return ctx, err
}

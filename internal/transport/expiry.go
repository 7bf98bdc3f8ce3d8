package transport

import (
	"context"
	"errors"
	"net/http"

	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/callerauth"
)

// A stream lives no longer than the credentials it was opened with. The context Authenticate
// gives a request ends when the caller's token does, with callerauth.ErrCredentialsExpired as
// its cause; a stream that sees that cause ends with a last word the client understands (an
// error coded UNAUTHENTICATED, or on a WebSocket a close code), so that it reconnects with a
// fresh token instead of retrying with the spent one, or, worse, listening on without one.

// streamContext is the context of a stream that outlives its request's handler (its connection
// taken over): the request's values without its end, which comes when the handler returns, but
// with its deadline, which is the caller's token's (the only deadline the server puts on a
// request), ending with ErrCredentialsExpired.
func streamContext(r *http.Request) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	dl, ok := r.Context().Deadline()
	if !ok {
		return ctx, cancel
	}
	ctx, cancelDeadline := context.WithDeadlineCause(ctx, dl, callerauth.ErrCredentialsExpired)
	return ctx, func() { cancelDeadline(); cancel() }
}

// credentialsExpired reports whether ctx ended because the caller's token did.
func credentialsExpired(ctx context.Context) bool {
	return ctx.Err() != nil && errors.Is(context.Cause(ctx), callerauth.ErrCredentialsExpired)
}

// expiredError is the last word of a stream whose caller's token expired.
func expiredError() *gqlerror.Error {
	return &gqlerror.Error{
		Message:    callerauth.ErrCredentialsExpired.Error() + ": send the operation again with a fresh one",
		Extensions: map[string]any{"code": apperr.Unauthenticated},
	}
}

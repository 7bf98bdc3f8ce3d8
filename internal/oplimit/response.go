package oplimit

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/bytesize"
	"github.com/advisorhq/gateway/internal/gqlrun"
)

// errCancelled ends the fields of an operation whose context ended for another reason than its
// budget: its client went away, or its time ran out. It has no cause on purpose: the presenter
// would log every field it ends.
var errCancelled = apperr.New(apperr.Internal, "The operation was cancelled before it finished")

// response is one response as the limits see it: what it may still grow by (the whole response
// of a query or mutation, one event of a subscription) and whether one of its fields has said
// why it ended. It is the executor's gqlrun.Guard.
type response struct {
	limit    int64 // 0: no budget
	used     atomic.Int64
	over     atomic.Bool
	cancel   context.CancelCauseFunc
	reported atomic.Bool
}

type responseKey struct{}

// InterceptResponse gives each response its budget; gqlgen resolves a query's fields, and a
// subscription event's, within it. A response that grew past its budget is replaced by one
// error: what was resolved by then is arbitrary, and its per-field errors would be as large as
// the response that was refused. An operation with deferred fragments has one budget for all
// its parts: the fragments resolve in the initial response's context after it has returned,
// and a part that takes the whole past the budget is its last.
func (e *Extension) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	var stats *graphql.Stats
	if graphql.HasOperationContext(ctx) {
		stats = &graphql.GetOperationContext(ctx).Stats
	}
	r, later := (*response)(nil), false
	if stats != nil {
		r, later = stats.GetExtension(deferredKey).(*response)
	}
	if !later {
		r = &response{limit: e.limits.ResponseBytes}
		if r.limit > 0 {
			var cancel context.CancelCauseFunc
			ctx, cancel = context.WithCancelCause(ctx)
			r.cancel = cancel
		}
	}
	// The executor answers most fields from memory, past InterceptField: it charges them and
	// stops them through the guard.
	resp := next(gqlrun.WithGuard(context.WithValue(ctx, responseKey{}, r), r))
	more := resp != nil && resp.HasNext != nil && *resp.HasNext && !r.over.Load()
	switch {
	case more && !later && stats != nil:
		stats.SetExtension(deferredKey, r)
	case !more && later:
		stats.SetExtension(deferredKey, nil)
	}
	if !more && r.cancel != nil {
		r.cancel(nil) // the last part: nothing resolves in the budget's context any more
	}
	if resp == nil || !r.over.Load() {
		return resp
	}
	err := r.error()
	over := &graphql.Response{
		Errors: gqlerror.List{{
			Message:    err.Message,
			Extensions: map[string]any{"code": err.Code},
		}},
		Extensions: resp.Extensions,
	}
	if later {
		// In the place of the part that went over, and the last: its fragments are cancelled.
		done := false
		over.Path, over.Label, over.HasNext = resp.Path, resp.Label, &done
	}
	return over
}

// deferredKey keeps, in an operation's stats, the budget its deferred parts share.
const deferredKey = "OperationLimits.deferred"

// error says why the response ended.
func (r *response) error() *apperr.Error {
	return apperr.New(apperr.OperationLimitExceeded, fmt.Sprintf(
		"The response grew to %d bytes; at most %d (%s) are allowed (MAX_RESPONSE_BYTES)",
		r.used.Load(), r.limit, bytesize.Format(r.limit)))
}

// InterceptField ends a field at once, without calling its resolver, when the operation's
// context has ended: its client went away, or its response is over budget. Otherwise it adds
// the field's result to the response's budget.
func (e *Extension) InterceptField(ctx context.Context, next graphql.Resolver) (any, error) {
	r, _ := ctx.Value(responseKey{}).(*response)
	select {
	case <-ctx.Done():
		return nil, r.Stopped(ctx)
	default:
	}
	res, err := next(ctx)
	if r == nil || r.limit <= 0 || err != nil {
		return res, err
	}
	if !r.add(charge(graphql.GetFieldContext(ctx), res)) {
		return nil, r.error()
	}
	return res, nil
}

// Stopped is the error that ends a field of a response whose context has ended. One field
// says why; the others end without an error of their own, or the errors would grow as large
// as the response that was stopped.
func (r *response) Stopped(ctx context.Context) error {
	if r != nil && !r.reported.CompareAndSwap(false, true) {
		return apperr.ErrReported
	}
	if err, ok := apperr.As(context.Cause(ctx)); ok {
		return err
	}
	return errCancelled
}

// Charge adds n bytes to the response.
func (r *response) Charge(n int64) {
	if r.limit > 0 {
		r.add(n)
	}
}

// add adds n bytes to the response and reports whether it is still within the budget; the
// first charge past it ends the response's context, and with it the fields still resolving.
func (r *response) add(n int64) bool {
	if r.used.Add(n) <= r.limit {
		return true
	}
	if r.over.CompareAndSwap(false, true) {
		r.cancel(r.error())
	}
	return false
}

// keySize is a field's share of its object's punctuation: quotes, colon and comma.
const keySize int64 = 4

// charge estimates what a field's result adds to the response. Objects charge their own
// __typename (the generated executor does), and lists their elements' punctuation.
func charge(fc *graphql.FieldContext, res any) int64 {
	n := keySize + gqlrun.Size(res)
	if fc != nil {
		n += int64(len(fc.Field.Alias))
	}
	return n
}

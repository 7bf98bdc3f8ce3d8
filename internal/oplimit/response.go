package oplimit

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/bytesize"
)

// errCancelled ends the fields of an operation whose context ended for another reason than its
// budget: its client went away, or its time ran out. It has no cause on purpose: the presenter
// would log every field it ends.
var errCancelled = apperr.New(apperr.Internal, "The operation was cancelled before it finished")

// budget is what one response may still grow by: the whole response of a query or mutation,
// one event of a subscription.
type budget struct {
	limit  int64
	used   atomic.Int64
	over   atomic.Bool
	cancel context.CancelCauseFunc
	// typenames caches, by field, what the __typename fields of its selection add to each
	// object it returns.
	typenames sync.Map
}

type budgetKey struct{}

// ended records that one field of a response reported why the response's context ended.
type ended struct{ reported atomic.Bool }

type endedKey struct{}

// InterceptResponse gives each response its budget; gqlgen resolves a query's fields, and a
// subscription event's, within it. A response that grew past its budget is replaced by one
// error: what was resolved by then is arbitrary, and its per-field errors would be as large as
// the response that was refused.
func (e *Extension) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	ctx = context.WithValue(ctx, endedKey{}, &ended{})
	if e.limits.ResponseBytes <= 0 {
		return next(ctx)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	b := &budget{limit: e.limits.ResponseBytes, cancel: cancel}
	resp := next(context.WithValue(ctx, budgetKey{}, b))
	if resp == nil || !b.over.Load() {
		return resp
	}
	err := b.error()
	return &graphql.Response{
		Errors: gqlerror.List{{
			Message:    err.Message,
			Extensions: map[string]any{"code": err.Code},
		}},
		Extensions: resp.Extensions,
	}
}

// error says why the response ended.
func (b *budget) error() *apperr.Error {
	return apperr.New(apperr.OperationLimitExceeded, fmt.Sprintf(
		"The response grew to %d bytes; at most %d (%s) are allowed (MAX_RESPONSE_BYTES)",
		b.used.Load(), b.limit, bytesize.Format(b.limit)))
}

// InterceptField ends a field at once, without calling its resolver, when the operation's
// context has ended: its client went away, or its response is over budget. Otherwise it adds
// the field's result to the response's budget.
func (e *Extension) InterceptField(ctx context.Context, next graphql.Resolver) (any, error) {
	select {
	case <-ctx.Done():
		var why error = errCancelled
		if err, ok := apperr.As(context.Cause(ctx)); ok {
			why = err
		}
		// One field says why; the others end without an error of their own, or the errors
		// would grow as large as the response that was stopped.
		if e, _ := ctx.Value(endedKey{}).(*ended); e != nil && !e.reported.CompareAndSwap(false, true) {
			return nil, apperr.ErrReported
		}
		return nil, why
	default:
	}
	res, err := next(ctx)
	b, _ := ctx.Value(budgetKey{}).(*budget)
	if b == nil || err != nil {
		return res, err
	}
	if b.used.Add(b.charge(graphql.GetFieldContext(ctx), res)) > b.limit {
		if b.over.CompareAndSwap(false, true) {
			b.cancel(b.error())
		}
		return nil, b.error()
	}
	return res, nil
}

// keySize is a field's share of its object's punctuation: quotes, colon and comma.
const keySize int64 = 4

// typenameSize is what a __typename field adds to an object, its name left out: type names are
// seldom longer.
const typenameSize int64 = keySize + 22

// charge estimates what a field's result adds to the response. gqlgen writes __typename
// without the field middleware, so the field that returns an object charges for it.
func (b *budget) charge(fc *graphql.FieldContext, res any) int64 {
	n := keySize + valueSize(res)
	if fc == nil {
		return n
	}
	n += int64(len(fc.Field.Alias))
	if len(fc.Field.Selections) > 0 {
		if t := b.typenamesOf(fc.Field); t > 0 {
			n += t * objectCount(res)
		}
	}
	return n
}

func (b *budget) typenamesOf(f graphql.CollectedField) int64 {
	if t, ok := b.typenames.Load(f.Field); ok {
		return t.(int64)
	}
	t := typenames(f.Selections, nil)
	b.typenames.Store(f.Field, t)
	return t
}

// typenames adds up the __typename fields of a selection set, as they appear in each object.
func typenames(set ast.SelectionSet, seen map[string]bool) int64 {
	var n int64
	for _, sel := range set {
		switch sel := sel.(type) {
		case *ast.Field:
			if sel.Name == "__typename" {
				n += typenameSize + int64(len(sel.Alias))
			}
		case *ast.InlineFragment:
			n += typenames(sel.SelectionSet, seen)
		case *ast.FragmentSpread:
			if sel.Definition != nil && !seen[sel.Name] {
				if seen == nil {
					seen = map[string]bool{}
				}
				seen[sel.Name] = true
				n += typenames(sel.Definition.SelectionSet, seen)
			}
		}
	}
	return n
}

// objectCount is how many objects a field returned: a list's length, or one.
func objectCount(v any) int64 {
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface {
		if rv.IsNil() {
			return 0
		}
		rv = rv.Elem()
	}
	if rv.Kind() == reflect.Slice || rv.Kind() == reflect.Array {
		return int64(rv.Len())
	}
	return 1
}

// valueSize estimates how many bytes a field's result takes in the response. Objects and lists
// count only their punctuation: their fields count themselves as they resolve. It is called for
// every field of every response, so it stays a type switch; reflection is left to the types the
// switch does not name, such as enums.
func valueSize(v any) int64 {
	switch v := v.(type) {
	case nil:
		return 4
	case string:
		return int64(len(v)) + 2
	case *string:
		if v == nil {
			return 4
		}
		return int64(len(*v)) + 2
	case bool, *bool:
		return 5
	case int, int32, int64, *int, *int32, *int64:
		return 11
	case float64, *float64, float32, *float32:
		return 16
	case time.Time, *time.Time:
		return 26
	case []string:
		n := int64(2)
		for _, s := range v {
			n += int64(len(s)) + 3
		}
		return n
	case json.RawMessage:
		return int64(len(v))
	}
	return reflectedSize(reflect.ValueOf(v))
}

func reflectedSize(v reflect.Value) int64 {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return 4
		}
		return reflectedSize(v.Elem())
	case reflect.String:
		return int64(v.Len()) + 2
	case reflect.Slice, reflect.Array:
		n := int64(v.Len()) + 2
		if v.Type().Elem().Kind() == reflect.String {
			for i := range v.Len() {
				n += int64(v.Index(i).Len()) + 2
			}
		}
		return n
	}
	return 2
}

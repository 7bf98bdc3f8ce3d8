package advisor

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/advisorhq/gateway/internal/apperr"
)

// BudgetSetting is the setting that sets an operation's budget of upstream requests; a refusal
// names it, so whoever meets the limit knows what to change.
const BudgetSetting = "UPSTREAM_REQUEST_BUDGET"

// budget is what is left of one operation's upstream requests. Resolvers of one operation run
// in parallel, so it is spent atomically.
type budget struct {
	limit int64
	left  atomic.Int64
}

type budgetKey struct{}

// WithBudget returns a context whose calls through any Client may make n requests to the
// service between them; every attempt, retries included, takes one, and a read answered by the
// request's Cache takes none. Once they are spent, a call fails with OPERATION_LIMIT_EXCEEDED
// before it makes a request. Install it once per GraphQL operation. n <= 0 installs no budget:
// a context without one is unlimited.
func WithBudget(ctx context.Context, n int) context.Context {
	if n <= 0 {
		return ctx
	}
	b := &budget{limit: int64(n)}
	b.left.Store(int64(n))
	return context.WithValue(ctx, budgetKey{}, b)
}

// spend takes one request from ctx's budget, or says that none is left.
func spend(ctx context.Context, op string) error {
	b, _ := ctx.Value(budgetKey{}).(*budget)
	if b == nil || b.left.Add(-1) >= 0 {
		return nil
	}
	return apperr.Wrap(apperr.OperationLimitExceeded,
		fmt.Sprintf("This operation needs more than %d requests to the Advisor service (%s)", b.limit, BudgetSetting),
		fmt.Errorf("%s: the operation's %d upstream requests are spent", op, b.limit))
}

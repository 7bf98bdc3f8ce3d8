package ratelimit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/callerauth"
)

// Limits are the budgets of each caller; a Limit with Rate 0 is no limit.
type Limits struct {
	// Operations per second (RATE_LIMIT, burst RATE_LIMIT_BURST).
	Operations Limit
	// Subscriptions opened per minute (RATE_LIMIT_SUBSCRIPTIONS).
	Subscriptions Limit
	// Cost per minute (RATE_LIMIT_COST), each operation counting its cost as the operation
	// limits measure it.
	Cost Limit
}

// On reports whether any budget is set.
func (l Limits) On() bool {
	return l.Operations.Rate > 0 || l.Subscriptions.Rate > 0 || l.Cost.Rate > 0
}

// Config is what the extension enforces.
type Config struct {
	Limiter Limiter
	Limits  Limits
	// Cost is an operation's cost; nil counts none.
	Cost func(*graphql.OperationContext) int64
	// Log receives the limiter's failures. Nil logs nothing.
	Log *slog.Logger
	// Timeout bounds each call to the limiter; 0 is DefaultTimeout. A limiter that does not
	// answer in time lets the operation through, so this is the most a stalled Redis adds to
	// an operation; its client must honour context deadlines (redisconn.Open's does).
	Timeout time.Duration
	// Pause is how long the limiter is left alone after a call failed, every operation
	// running uncounted meanwhile; 0 is DefaultPause. Then one operation tries it again.
	Pause time.Duration
}

// The defaults of Config.Timeout and Config.Pause. A local or same-zone Redis answers in about
// a millisecond, so 50 ms is a stall, not a slow answer; and with a second's pause an outage
// costs one operation in a second those 50 ms, rather than every operation, which is what
// took a frozen Redis from adding nothing to adding a second to each (two calls of 500 ms).
const (
	DefaultTimeout = 50 * time.Millisecond
	DefaultPause   = time.Second
)

// Extension is the gqlgen handler extension that counts every operation against its caller's
// budgets: operations a second before it is parsed, subscriptions and cost once it has
// validated and its kind and cost are known; always before it runs. A refusal
// is the operation's error, RATE_LIMITED: over HTTP a 429 with Retry-After and the RateLimit
// headers, on a WebSocket an error on that operation while the socket stays open.
type Extension struct {
	cfg Config
	now func() time.Time
	// warnedAt rate-limits the log of a failing limiter: one line per outage, not per operation.
	warnedAt atomic.Int64
	// skipUntil is, in Unix nanoseconds, when the limiter may be called again after a failure;
	// 0 while it answers. The caller that finds it past moves it a Pause on before calling,
	// so that only that caller waits on a limiter that may still be stalled.
	skipUntil atomic.Int64
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
	graphql.OperationContextMutator
} = (*Extension)(nil)

// New returns the extension enforcing cfg.
func New(cfg Config) *Extension {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Pause <= 0 {
		cfg.Pause = DefaultPause
	}
	return &Extension{cfg: cfg, now: time.Now}
}

// ExtensionName names the extension in gqlgen's stats.
func (*Extension) ExtensionName() string { return "RateLimits" }

// Validate accepts every schema.
func (*Extension) Validate(graphql.ExecutableSchema) error { return nil }

// policy is one budget as the RateLimit headers name it, with the setting that sets it.
type policy struct {
	name, setting string
	limit         Limit
}

// MutateOperationParameters counts the operation against its caller's operations a second,
// before anything parses it: a caller sending documents that do not parse or validate spends
// its budget too.
func (e *Extension) MutateOperationParameters(ctx context.Context, _ *graphql.RawParams) *gqlerror.Error {
	return e.count(ctx, []check{{policy{"operations", "RATE_LIMIT", e.cfg.Limits.Operations}, 1}})
}

// check is one budget to count n against.
type check struct {
	policy
	n int64
}

// MutateOperationContext counts op against its caller's subscriptions a minute and cost a
// minute, now that it has validated and its kind and cost are known.
func (e *Extension) MutateOperationContext(ctx context.Context, op *graphql.OperationContext) *gqlerror.Error {
	var checks []check
	if op.Operation != nil && op.Operation.Operation == ast.Subscription {
		checks = append(checks, check{policy{"subscriptions", "RATE_LIMIT_SUBSCRIPTIONS", e.cfg.Limits.Subscriptions}, 1})
	}
	if e.cfg.Cost != nil {
		if cost := e.cfg.Cost(op); cost > 0 {
			checks = append(checks, check{policy{"cost", "RATE_LIMIT_COST", e.cfg.Limits.Cost}, cost})
		}
	}
	return e.count(ctx, checks)
}

// count counts each check against the caller's budget. A limiter that fails lets the operation
// through: an outage of Redis must not refuse every caller, and the operation limits still
// bound what each operation costs. Nor may it slow every caller: each call has Timeout, and
// after a failure the limiter is skipped for Pause.
func (e *Extension) count(ctx context.Context, checks []check) *gqlerror.Error {
	key := ""
	for _, c := range checks {
		if c.limit.Rate > 0 && key == "" {
			key = CallerKey(ctx)
		}
	}
	for _, c := range checks {
		if c.limit.Rate <= 0 {
			continue
		}
		if !e.mayCall() {
			return nil
		}
		res, err := e.allowN(ctx, c.name+":"+key, c.limit, int(min(c.n, int64(c.limit.Burst))))
		if err != nil {
			if ctx.Err() == nil {
				// The limiter failed, not the caller, who went away: leave it alone a while.
				e.skipUntil.Store(e.now().Add(e.cfg.Pause).UnixNano())
			}
			e.warn(ctx, err)
			return nil
		}
		if e.skipUntil.Load() != 0 {
			e.skipUntil.Store(0)
		}
		if !res.Allowed {
			return refuse(c.policy, c.n, res)
		}
	}
	return nil
}

func (e *Extension) allowN(ctx context.Context, key string, limit Limit, n int) (Result, error) {
	ctx, cancel := context.WithTimeout(ctx, e.cfg.Timeout)
	defer cancel()
	return e.cfg.Limiter.AllowN(ctx, key, limit, n)
}

// mayCall reports whether the limiter is to be called: it answered last time, or it failed and
// Pause has passed, and no other caller has claimed the try since.
func (e *Extension) mayCall() bool {
	until := e.skipUntil.Load()
	if until == 0 {
		return true
	}
	now := e.now()
	if now.UnixNano() < until {
		return false
	}
	return e.skipUntil.CompareAndSwap(until, now.Add(e.cfg.Pause).UnixNano())
}

// warnEvery bounds how often a failing limiter is logged.
const warnEvery = 10 * time.Second

func (e *Extension) warn(ctx context.Context, err error) {
	now := time.Now().UnixNano()
	last := e.warnedAt.Load()
	if now-last < int64(warnEvery) || !e.warnedAt.CompareAndSwap(last, now) {
		return
	}
	e.cfg.Log.WarnContext(ctx, "rate limits cannot be counted: operations run unlimited meanwhile", "error", apperr.Redact(err.Error()))
}

// Refusal is an operation refused for a spent budget. The transports answer it over HTTP with
// its Status and Header.
type Refusal struct {
	err    *apperr.Error
	policy policy
	res    Result
}

func (r *Refusal) Error() string { return r.err.Error() }

// Unwrap gives the presenter the code and message.
func (r *Refusal) Unwrap() error { return r.err }

// Status is 429 Too Many Requests.
func (r *Refusal) Status() int { return http.StatusTooManyRequests }

// Header is Retry-After and the RateLimit-Policy and RateLimit fields of the IETF's draft
// (draft-ietf-httpapi-ratelimit-headers-09): the budget spent, what is left of it (nothing),
// and when it is whole again.
func (r *Refusal) Header() http.Header {
	h := http.Header{}
	l := r.policy.limit
	h.Set("Retry-After", strconv.Itoa(apperr.RetrySeconds(r.res.RetryAfter)))
	h.Set("RateLimit-Policy", fmt.Sprintf(`"%s";q=%d;w=%d`, r.policy.name, l.Burst, int(l.Period/time.Second)))
	h.Set("RateLimit", fmt.Sprintf(`"%s";r=%d;t=%d`, r.policy.name, max(r.res.Remaining, 0), apperr.RetrySeconds(r.res.ResetAfter)))
	return h
}

func refuse(p policy, n int64, res Result) *gqlerror.Error {
	per := "a second"
	if p.limit.Period == time.Minute {
		per = "a minute"
	}
	var msg string
	switch p.name {
	case "cost":
		msg = fmt.Sprintf("Too costly: this operation costs %d, and the caller may spend %d %s (%s); retry in %d s",
			n, p.limit.Rate, per, p.setting, apperr.RetrySeconds(res.RetryAfter))
	default:
		msg = fmt.Sprintf("Too many %s: the caller may start %d %s, %d at once (%s); retry in %d s",
			p.name, p.limit.Rate, per, p.limit.Burst, p.setting, apperr.RetrySeconds(res.RetryAfter))
	}
	err := &apperr.Error{Code: apperr.RateLimited, Message: msg, RetryAfter: res.RetryAfter}
	return &gqlerror.Error{
		Message: msg,
		Err:     &Refusal{err: err, policy: p, res: res},
		Extensions: map[string]any{
			"code":       apperr.RateLimited,
			"retryAfter": apperr.RetrySeconds(res.RetryAfter),
		},
	}
}

type clientKey struct{}

// WithClient keeps the address of the client a request came from, for the budgets of callers
// without an identity.
func WithClient(ctx context.Context, remoteAddr string) context.Context {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	return context.WithValue(ctx, clientKey{}, host)
}

// CallerKey names the caller of ctx, for budgets: the authenticated advisor of its firm (two
// firms may have advisors of the same id, and are two callers), or the client's address when
// the caller is anonymous. It is a hash, so that neither an advisor's id nor an address is
// written into Redis keys, where anyone who can list them would read them.
func CallerKey(ctx context.Context) string {
	who := ""
	if c, ok := callerauth.FromContext(ctx); ok && c.AdvisorID != "" {
		who = "advisor\x00" + c.FirmID + "\x00" + c.AdvisorID
	} else {
		addr, _ := ctx.Value(clientKey{}).(string)
		who = "address\x00" + addr
	}
	sum := sha256.Sum256([]byte(who))
	return hex.EncodeToString(sum[:16])
}

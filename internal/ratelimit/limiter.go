// Package ratelimit bounds what each caller may ask of the gateway: operations per second,
// subscriptions opened per minute and operation cost per minute, each a generic cell rate
// (GCRA: a rate with a burst). Budgets live in Redis when replicas share one, so a caller's
// budget is the same whichever replica it reaches, and in the process otherwise.
package ratelimit

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
)

// Limit is a rate with a burst: Rate events per Period on average, Burst of them at once.
type Limit struct {
	Rate   int
	Burst  int
	Period time.Duration
}

// Result is what a limiter decided about n events.
type Result struct {
	// Allowed says the events may happen; they are counted only then.
	Allowed bool
	// Remaining is how many more events could happen now.
	Remaining int
	// RetryAfter is how long until the events would be allowed, when they are not.
	RetryAfter time.Duration
	// ResetAfter is how long until the budget is whole again.
	ResetAfter time.Duration
}

// Limiter counts events against a key's budget.
type Limiter interface {
	// AllowN counts n events of key against limit, if they fit.
	AllowN(ctx context.Context, key string, limit Limit, n int) (Result, error)
}

// redisTimeout bounds each Redis call, for callers that set no tighter deadline (the
// Extension does: Config.Timeout): a stalled Redis must not stall every operation.
const redisTimeout = 500 * time.Millisecond

// Redis keeps budgets in Redis with go-redis/redis_rate, whose one script per decision runs on
// one key, so it works on a Redis Cluster too.
type Redis struct {
	limiter *redis_rate.Limiter
	prefix  string
}

// NewRedis returns a limiter keeping budgets in client under keys that start
// "rate:"+prefix (redis_rate puts its own "rate:" first).
func NewRedis(client redis.UniversalClient, prefix string) *Redis {
	return &Redis{limiter: redis_rate.NewLimiter(client), prefix: prefix + "ratelimit:"}
}

// AllowN counts n events of key against limit in Redis.
func (r *Redis) AllowN(ctx context.Context, key string, limit Limit, n int) (Result, error) {
	ctx, cancel := context.WithTimeout(ctx, redisTimeout)
	defer cancel()
	res, err := r.limiter.AllowN(ctx, r.prefix+key, redis_rate.Limit{Rate: limit.Rate, Burst: limit.Burst, Period: limit.Period}, n)
	if err != nil {
		return Result{}, fmt.Errorf("count %d against the rate limit of %s: %w", n, key, err)
	}
	out := Result{Allowed: res.Allowed > 0, Remaining: max(res.Remaining, 0), ResetAfter: max(res.ResetAfter, 0)}
	if !out.Allowed {
		out.RetryAfter = res.RetryAfter // redis_rate says -1 when allowed
	}
	return out, nil
}

// Memory keeps budgets in the process with the same algorithm as Redis. A key whose budget is
// whole again is forgotten, so memory follows the callers active within a period, not every
// caller ever seen.
type Memory struct {
	now func() time.Time

	mu sync.Mutex
	// tat is each key's theoretical arrival time: when its budget is whole again.
	tat map[string]time.Time
	// sweepAt is when the map is next cleared of keys whose budget is whole, and swept how
	// many keys the last sweep left.
	sweepAt time.Time
	swept   int
}

// NewMemory returns an in-process limiter reading the time from now (nil: time.Now).
func NewMemory(now func() time.Time) *Memory {
	if now == nil {
		now = time.Now
	}
	return &Memory{now: now, tat: make(map[string]time.Time)}
}

// sweepEvery is how often Memory forgets the keys whose budget is whole again; it also does
// when it holds twice as many keys as the last sweep left, and at least minSweepSize.
const (
	sweepEvery   = time.Minute
	minSweepSize = 1024
)

// AllowN counts n events of key against limit.
func (m *Memory) AllowN(_ context.Context, key string, limit Limit, n int) (Result, error) {
	now := m.now()
	emission := limit.Period / time.Duration(limit.Rate)
	m.mu.Lock()
	defer m.mu.Unlock()
	// Swept every minute, and sooner when a flood of new callers has doubled the map.
	if now.After(m.sweepAt) || len(m.tat) >= 2*max(m.swept, minSweepSize) {
		for k, t := range m.tat {
			if !t.After(now) {
				delete(m.tat, k)
			}
		}
		m.sweepAt, m.swept = now.Add(sweepEvery), len(m.tat)
	}
	tat := m.tat[key]
	if tat.Before(now) {
		tat = now
	}
	newTAT := tat.Add(emission * time.Duration(n))
	allowAt := newTAT.Add(-emission * time.Duration(limit.Burst))
	diff := now.Sub(allowAt)
	if diff < 0 {
		return Result{RetryAfter: -diff, ResetAfter: tat.Sub(now)}, nil
	}
	m.tat[key] = newTAT
	return Result{
		Allowed:    true,
		Remaining:  int(math.Floor(float64(diff) / float64(emission))),
		ResetAfter: newTAT.Sub(now),
	}, nil
}

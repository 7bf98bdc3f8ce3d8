package ratelimit_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/redis/go-redis/v9"

	"github.com/advisorhq/gateway/internal/callerauth"
	"github.com/advisorhq/gateway/internal/eventlog"
	"github.com/advisorhq/gateway/internal/eventlog/eventlogtest"
	"github.com/advisorhq/gateway/internal/ratelimit"
	"github.com/advisorhq/gateway/internal/redisconn"
)

func uniqueKey() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Both limiters decide alike: a burst at once, then one per emission interval, a cost of n
// spending n, and RetryAfter saying when the refused events would fit.
func TestLimitersAllowABurstThenTheRate(t *testing.T) {
	limiters := map[string]func(t *testing.T) ratelimit.Limiter{
		"memory": func(*testing.T) ratelimit.Limiter { return ratelimit.NewMemory(nil) },
		"redis": func(t *testing.T) ratelimit.Limiter {
			return ratelimit.NewRedis(eventlogtest.SharedClient(t), eventlogtest.KeyPrefix("ratelimit-test"))
		},
	}
	for name, newLimiter := range limiters {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			l := newLimiter(t)
			limit := ratelimit.Limit{Rate: 10, Burst: 3, Period: time.Second} // one every 100 ms
			key := uniqueKey()
			for i := range 3 {
				// Redis computes in floating-point seconds, and may round one event down.
				if res, err := l.AllowN(ctx, key, limit, 1); err != nil || !res.Allowed || res.Remaining > 2-i || res.Remaining < 1-i {
					t.Fatalf("event %d of the burst: %+v, %v; want allowed, %d remaining", i, res, err, 2-i)
				}
			}
			res, err := l.AllowN(ctx, key, limit, 1)
			if err != nil || res.Allowed || res.RetryAfter <= 0 || res.RetryAfter > 100*time.Millisecond {
				t.Fatalf("past the burst: %+v, %v; want refused, retry within 100 ms", res, err)
			}
			time.Sleep(res.RetryAfter + 5*time.Millisecond)
			if res, err := l.AllowN(ctx, key, limit, 1); err != nil || !res.Allowed {
				t.Fatalf("after RetryAfter: %+v, %v; want allowed", res, err)
			}
			other := uniqueKey()
			if res, err := l.AllowN(ctx, other, limit, 3); err != nil || !res.Allowed || res.Remaining > 0 {
				t.Fatalf("a cost of 3 on a fresh key: %+v, %v; want allowed with nothing left", res, err)
			}
			if res, err := l.AllowN(ctx, other, limit, 2); err != nil || res.Allowed || res.RetryAfter < 150*time.Millisecond {
				t.Fatalf("a cost of 2 on a spent key: %+v, %v; want refused for about 200 ms", res, err)
			}
		})
	}
}

// The in-process limiter forgets callers whose budget is whole again, so a stream of callers
// each seen once does not grow it without end.
func TestTheMemoryLimiterForgetsCallersWhoseBudgetIsWhole(t *testing.T) {
	now := time.Unix(0, 0)
	l := ratelimit.NewMemory(func() time.Time { return now })
	limit := ratelimit.Limit{Rate: 1, Burst: 1, Period: time.Second}
	ctx := context.Background()
	for i := range 10000 {
		_, _ = l.AllowN(ctx, "caller-"+strconv.Itoa(i), limit, 1)
	}
	// Within the minute, a second wave of new callers sweeps out the first, whose budgets are
	// whole again, as it doubles the map.
	now = now.Add(2 * time.Second)
	for range 10000 {
		_, _ = l.AllowN(ctx, uniqueKey(), limit, 1)
	}
	if n := ratelimit.Keys(l); n > 12000 {
		t.Errorf("%d keys kept after a second wave of 10,000 callers, want the first wave's swept out", n)
	}
	now = now.Add(2 * time.Minute)
	_, _ = l.AllowN(ctx, "one more", limit, 1)
	if n := ratelimit.Keys(l); n != 1 {
		t.Errorf("%d keys kept after every budget is whole again, want the one just used", n)
	}
}

// A caller is its advisor when it has one, and its address otherwise.
func TestACallersBudgetIsItsAdvisorsOrItsAddresss(t *testing.T) {
	limiter := ratelimit.NewMemory(nil)
	ext := ratelimit.New(ratelimit.Config{Limiter: limiter, Limits: ratelimit.Limits{
		Operations: ratelimit.Limit{Rate: 1, Burst: 1, Period: time.Hour}}})
	anon := ratelimit.WithClient(context.Background(), "192.0.2.7:51234")
	ada := callerauth.WithCaller(anon, callerauth.Caller{AdvisorID: "ada", FirmID: "f1"})
	bob := callerauth.WithCaller(anon, callerauth.Caller{AdvisorID: "bob", FirmID: "f1"})
	otherPort := ratelimit.WithClient(context.Background(), "192.0.2.7:60000")
	for _, step := range []struct {
		name    string
		ctx     context.Context
		allowed bool
	}{
		{"ada", ada, true}, {"ada again", ada, false}, {"bob", bob, true},
		{"the address", anon, true}, {"the address from another port", otherPort, false},
	} {
		if err := ext.MutateOperationParameters(step.ctx, &graphql.RawParams{}); (err == nil) != step.allowed {
			t.Errorf("%s: %v, want allowed %v", step.name, err, step.allowed)
		}
	}
}

// A Redis that cannot be reached lets operations through, and says so once, not once each.
func TestALimiterThatFailsLetsOperationsThroughAndSaysSoOnce(t *testing.T) {
	dead := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
	defer dead.Close()
	var logged bytes.Buffer
	ext := ratelimit.New(ratelimit.Config{
		Limiter: ratelimit.NewRedis(dead, "x:"),
		Limits:  ratelimit.Limits{Operations: ratelimit.Limit{Rate: 1, Burst: 1, Period: time.Hour}},
		Log:     slog.New(slog.NewTextHandler(&logged, nil)),
	})
	for range 3 {
		if err := ext.MutateOperationParameters(context.Background(), &graphql.RawParams{}); err != nil {
			t.Fatalf("refused while the limiter fails: %v", err)
		}
	}
	if n := strings.Count(logged.String(), "rate limits cannot be counted"); n != 1 {
		t.Errorf("logged %d warnings, want 1:\n%s", n, logged.String())
	}
}

// stalledLimiter is a limiter that never answers: each call waits for its context to end, and
// records the deadline it was given.
type stalledLimiter struct {
	mu        sync.Mutex
	calls     int
	deadlines []time.Duration // each call's deadline, from when it was called
}

func (s *stalledLimiter) AllowN(ctx context.Context, _ string, _ ratelimit.Limit, _ int) (ratelimit.Result, error) {
	s.mu.Lock()
	s.calls++
	if d, ok := ctx.Deadline(); ok {
		s.deadlines = append(s.deadlines, time.Until(d))
	} else {
		s.deadlines = append(s.deadlines, -1)
	}
	s.mu.Unlock()
	<-ctx.Done()
	return ratelimit.Result{}, ctx.Err()
}

func (s *stalledLimiter) seen() (int, []time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls, append([]time.Duration(nil), s.deadlines...)
}

// A stalled limiter costs an operation at most Timeout, and after it failed it is left alone
// for Pause, every operation meanwhile running uncounted without waiting on it; then one
// operation tries it again.
func TestAStalledLimiterIsGivenAShortDeadlineThenLeftAloneAWhile(t *testing.T) {
	stalled := &stalledLimiter{}
	ext := ratelimit.New(ratelimit.Config{
		Limiter: stalled,
		Limits: ratelimit.Limits{
			Operations: ratelimit.Limit{Rate: 1, Burst: 1, Period: time.Hour},
			Cost:       ratelimit.Limit{Rate: 1, Burst: 1, Period: time.Hour},
		},
		Cost: func(*graphql.OperationContext) int64 { return 1 },
	})
	now := time.Unix(1000, 0)
	ratelimit.SetClock(ext, func() time.Time { return now })
	ctx := context.Background()
	operation := func() {
		t.Helper()
		if err := ext.MutateOperationParameters(ctx, &graphql.RawParams{}); err != nil {
			t.Fatalf("refused while the limiter stalls: %v", err)
		}
		if err := ext.MutateOperationContext(ctx, &graphql.OperationContext{}); err != nil {
			t.Fatalf("refused while the limiter stalls: %v", err)
		}
	}

	operation()
	calls, deadlines := stalled.seen()
	if calls != 1 {
		t.Fatalf("the first operation called the stalled limiter %d times, want once: its failure skips the cost check", calls)
	}
	if d := deadlines[0]; d < 0 || d > 100*time.Millisecond {
		t.Fatalf("the limiter's call had a deadline %v away, want one within 100 ms (DefaultTimeout is %v)", d, ratelimit.DefaultTimeout)
	}

	for range 100 {
		operation()
	}
	now = now.Add(ratelimit.DefaultPause - time.Millisecond)
	operation()
	if calls, _ := stalled.seen(); calls != 1 {
		t.Fatalf("%d calls within the pause after a failure, want none after the first", calls-1)
	}

	now = now.Add(2 * time.Millisecond)
	operation()
	operation()
	if calls, _ := stalled.seen(); calls != 2 {
		t.Fatalf("%d calls once the pause had passed, want one operation trying again", calls-1)
	}
}

// A limiter that answers again is called again for every operation.
func TestALimiterIsCalledAgainOnceItAnswers(t *testing.T) {
	var fail bool
	calls := 0
	ext := ratelimit.New(ratelimit.Config{
		Limiter: limiterFunc(func(context.Context) error {
			calls++
			if fail {
				return context.DeadlineExceeded
			}
			return nil
		}),
		Limits: ratelimit.Limits{Operations: ratelimit.Limit{Rate: 100, Burst: 100, Period: time.Second}},
	})
	now := time.Unix(1000, 0)
	ratelimit.SetClock(ext, func() time.Time { return now })
	ctx := context.Background()
	steps := []struct {
		name      string
		fail      bool
		advance   time.Duration
		wantCalls int
	}{
		{"answering", false, 0, 1},
		{"failing", true, 0, 2},
		{"within the pause", false, 0, 2},
		{"after the pause, answering again", false, ratelimit.DefaultPause, 3},
		{"answering", false, 0, 4},
		{"answering still", false, 0, 5},
	}
	for _, s := range steps {
		fail = s.fail
		now = now.Add(s.advance)
		_ = ext.MutateOperationParameters(ctx, &graphql.RawParams{})
		if calls != s.wantCalls {
			t.Fatalf("%s: %d calls so far, want %d", s.name, calls, s.wantCalls)
		}
	}
}

type limiterFunc func(context.Context) error

func (f limiterFunc) AllowN(ctx context.Context, _ string, _ ratelimit.Limit, _ int) (ratelimit.Result, error) {
	if err := f(ctx); err != nil {
		return ratelimit.Result{}, err
	}
	return ratelimit.Result{Allowed: true}, nil
}

// silentServer accepts connections and never answers, as a Redis stopped with SIGSTOP does. It
// counts the connections it accepted.
func silentServer(t *testing.T) (addr string, accepted *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted = &atomic.Int64{}
	var conns []net.Conn
	var mu sync.Mutex
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return ln.Addr().String(), accepted
}

// A frozen Redis, reached through a client made as the gateway makes it: the first operation
// waits about Timeout for it, not the half-second of each of its two calls it used to wait,
// and the operations after it do not wait on it at all.
func TestAFrozenRedisAddsAtMostTheTimeoutToOneOperation(t *testing.T) {
	addr, accepted := silentServer(t)
	target, err := redisconn.Parse("redis://"+addr, false)
	if err != nil {
		t.Fatal(err)
	}
	client := target.Open(eventlog.CallTimeout)
	defer client.Close()
	ext := ratelimit.New(ratelimit.Config{
		Limiter: ratelimit.NewRedis(client, "frozen:"),
		Limits: ratelimit.Limits{
			Operations: ratelimit.Limit{Rate: 1, Burst: 1, Period: time.Hour},
			Cost:       ratelimit.Limit{Rate: 1, Burst: 1, Period: time.Hour},
		},
		Cost: func(*graphql.OperationContext) int64 { return 1 },
	})
	ctx := context.Background()
	operation := func() time.Duration {
		start := time.Now()
		if err := ext.MutateOperationParameters(ctx, &graphql.RawParams{}); err != nil {
			t.Fatalf("refused while Redis is frozen: %v", err)
		}
		if err := ext.MutateOperationContext(ctx, &graphql.OperationContext{}); err != nil {
			t.Fatalf("refused while Redis is frozen: %v", err)
		}
		return time.Since(start)
	}
	// Generous for a loaded machine, and still well short of the 500 ms one call used to wait.
	const bound = 300 * time.Millisecond
	if took := operation(); took > bound {
		t.Errorf("the first operation took %v with Redis frozen, want at most %v (Timeout %v)", took, bound, ratelimit.DefaultTimeout)
	}
	reached := accepted.Load()
	if reached == 0 {
		t.Fatal("the limiter never reached the frozen Redis: the test tests nothing")
	}
	start := time.Now()
	for range 50 {
		operation()
	}
	if took := time.Since(start); took > bound {
		t.Errorf("50 operations after the first took %v with Redis frozen, want them not to wait on it", took)
	}
	if n := accepted.Load(); n != reached {
		t.Errorf("%d more connections to the frozen Redis within the pause, want none", n-reached)
	}
}

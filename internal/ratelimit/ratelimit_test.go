package ratelimit_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/redis/go-redis/v9"

	"github.com/advisorhq/gateway/internal/callerauth"
	"github.com/advisorhq/gateway/internal/eventlog/eventlogtest"
	"github.com/advisorhq/gateway/internal/ratelimit"
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

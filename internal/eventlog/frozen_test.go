package eventlog_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/advisorhq/gateway/internal/eventlog"
	"github.com/advisorhq/gateway/internal/eventlog/eventlogtest"
)

// TestAFrozenRedisFailsEveryCallWithinTheBound freezes a Redis of the test's own (SIGSTOP): it
// accepts connections and answers nothing. Every call must fail as unavailable within about
// CallTimeout: go-redis retries three times by default, each retry waiting out its read timeout,
// which made one call take four times the bound.
func TestAFrozenRedisFailsEveryCallWithinTheBound(t *testing.T) {
	t.Parallel()
	srv := eventlogtest.StartRedis(t)
	opts := &redis.Options{Addr: srv.Addr()}
	eventlog.Bound(opts)
	client := redis.NewClient(opts)
	t.Cleanup(func() { _ = client.Close() })
	log := eventlog.NewRedis(client, "eventlog-test-frozen:", 10, time.Minute)
	ctx := context.Background()
	// Pooled connections made before the freeze are the ones go-redis would retry on.
	for i := range 4 {
		if _, _, err := log.Append(ctx, firm, body("before", i)); err != nil {
			t.Fatalf("Append before the freeze: %v", err)
		}
	}
	srv.Freeze()
	defer srv.Thaw()

	calls := map[string]func() error{
		"Append":  func() error { _, _, err := log.Append(ctx, firm, body("during", 0)); return err },
		"After":   func() error { _, err := log.After(ctx, "", 10); return err },
		"Before":  func() error { _, err := log.Before(ctx, "", 10); return err },
		"Bounds":  func() error { _, _, err := log.Bounds(ctx); return err },
		"Trimmed": func() error { _, err := log.Trimmed(ctx); return err },
		"Ping":    func() error { return log.Ping(ctx) },
	}
	// A loaded machine may be slow to schedule; twice the bound still tells a bounded call from
	// a retried one.
	const limit = 2 * eventlog.CallTimeout
	var wg sync.WaitGroup
	for name, call := range calls {
		wg.Go(func() {
			start := time.Now()
			err := call()
			took := time.Since(start)
			t.Logf("%s failed after %v", name, took.Round(10*time.Millisecond))
			if !errors.Is(err, eventlog.ErrUnavailable) {
				t.Errorf("%s: got %v, want an error wrapping ErrUnavailable", name, err)
			}
			if took > limit {
				t.Errorf("%s took %v, want at most %v (CallTimeout is %v)", name, took, limit, eventlog.CallTimeout)
			}
		})
	}
	wg.Wait()
}

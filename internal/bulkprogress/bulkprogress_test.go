package bulkprogress_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/advisorhq/gateway/internal/bulkprogress"
	"github.com/advisorhq/gateway/internal/clock"
	"github.com/advisorhq/gateway/internal/eventlog/eventlogtest"
)

// TestMain fails the package's tests when a goroutine outlives them: a watch must end with its
// context.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// store is one store under test, and another over the same data as another replica sees it
// (the same store for Memory, whose data is its process's).
type store struct {
	bulkprogress.Store
	replica bulkprogress.Store
}

var backends = []struct {
	name string
	open func(t *testing.T) store
}{
	{"memory", func(t *testing.T) store {
		m := bulkprogress.NewMemory(time.Now)
		return store{m, m}
	}},
	{"redis", func(t *testing.T) store {
		srv := eventlogtest.StartRedis(t)
		client := func() *redis.Client {
			c := redis.NewClient(&redis.Options{Addr: srv.Addr()})
			t.Cleanup(func() { _ = c.Close() })
			return c
		}
		return store{bulkprogress.NewRedis(client(), "test:"), bulkprogress.NewRedis(client(), "test:")}
	}},
}

func TestAStoreKeepsTheLatestProgressOfEachUpload(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			s, ctx := b.open(t), context.Background()
			for _, p := range []bulkprogress.Progress{
				{ID: "a", Phase: bulkprogress.Validating, Rows: 10, RowsTotal: 100},
				{ID: "b", Phase: bulkprogress.Uploading},
				{ID: "a", Phase: bulkprogress.Uploading, Rows: 100, RowsTotal: 100, Bytes: 5, BytesTotal: 50},
			} {
				if err := s.Put(ctx, p); err != nil {
					t.Fatal(err)
				}
			}
			got, ok, err := s.replica.Get(ctx, "a")
			if err != nil || !ok || got.Phase != bulkprogress.Uploading || got.Rows != 100 || got.Bytes != 5 || got.UpdatedAt.IsZero() {
				t.Fatalf("got %+v, %v, %v; want a's second progress, stamped", got, ok, err)
			}
			if _, ok, err := s.Get(ctx, "nobody"); ok || err != nil {
				t.Fatalf("an unknown upload: got ok %v, %v", ok, err)
			}
		})
	}
}

func TestProgressWithoutAnIDOrPhaseIsRefused(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			s := b.open(t)
			for _, p := range []bulkprogress.Progress{{Phase: bulkprogress.Done}, {ID: "x"}} {
				if err := s.Put(context.Background(), p); err == nil {
					t.Errorf("%+v was stored", p)
				}
			}
		})
	}
}

// A watcher, on this replica or another, sees where the upload stands and each change after,
// in order, and stops when the upload ends.
func TestAWatcherSeesEachChangeUntilTheUploadEnds(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			s, ctx := b.open(t), context.Background()
			if err := s.Put(ctx, bulkprogress.Progress{ID: "up", Phase: bulkprogress.Validating}); err != nil {
				t.Fatal(err)
			}
			seen := make(chan bulkprogress.Progress, 10)
			done := make(chan error, 1)
			go func() { done <- s.replica.Watch(ctx, "up", func(p bulkprogress.Progress) { seen <- p }) }()
			if p := next(t, seen); p.Phase != bulkprogress.Validating {
				t.Fatalf("first saw %s, want the current VALIDATING", p.Phase)
			}
			for i, phase := range []bulkprogress.Phase{bulkprogress.Uploading, bulkprogress.Processing, bulkprogress.Done} {
				if err := s.Put(ctx, bulkprogress.Progress{ID: "up", Phase: phase, Rows: int64(i)}); err != nil {
					t.Fatal(err)
				}
				if p := next(t, seen); p.Phase != phase || p.Rows != int64(i) {
					t.Fatalf("saw %s (%d rows), want %s (%d)", p.Phase, p.Rows, phase, i)
				}
			}
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("the watch of a finished upload ended with %v", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the watch did not end with the upload")
			}
		})
	}
}

func TestAWatchEndsWithItsContextOrForAnUnknownUpload(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			s := b.open(t)
			if err := s.Watch(context.Background(), "nobody", func(bulkprogress.Progress) {}); !errors.Is(err, bulkprogress.ErrUnknown) {
				t.Fatalf("watching an unknown upload: %v, want ErrUnknown", err)
			}
			if err := s.Put(context.Background(), bulkprogress.Progress{ID: "up", Phase: bulkprogress.Uploading}); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- s.Watch(ctx, "up", func(bulkprogress.Progress) { cancel() }) }()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("the watch ended with %v, want its context's end", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the watch outlived its context")
			}
		})
	}
}

func TestMemoryForgetsProgressAfterTheTTL(t *testing.T) {
	t.Parallel()
	c := clock.NewSettable(time.Now())
	m := bulkprogress.NewMemory(c.Now)
	ctx := context.Background()
	if err := m.Put(ctx, bulkprogress.Progress{ID: "old", Phase: bulkprogress.Done}); err != nil {
		t.Fatal(err)
	}
	c.Advance(bulkprogress.TTL + time.Second)
	if _, ok, _ := m.Get(ctx, "old"); ok {
		t.Fatal("progress outlived its TTL")
	}
}

func TestRedisKeepsProgressForTheTTLAndFailsFastWhenDown(t *testing.T) {
	t.Parallel()
	srv := eventlogtest.StartRedis(t)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr(), MaxRetries: -1})
	t.Cleanup(func() { _ = client.Close() })
	s := bulkprogress.NewRedis(client, "ttl:")
	ctx := context.Background()
	if err := s.Put(ctx, bulkprogress.Progress{ID: "u", Phase: bulkprogress.Done}); err != nil {
		t.Fatal(err)
	}
	ttl, err := client.TTL(ctx, "ttl:{bulk}:u").Result()
	if err != nil || ttl <= bulkprogress.TTL-time.Minute || ttl > bulkprogress.TTL {
		t.Fatalf("TTL %v (%v), want about %v", ttl, err, bulkprogress.TTL)
	}
	srv.Stop()
	start := time.Now()
	if err := s.Put(ctx, bulkprogress.Progress{ID: "u", Phase: bulkprogress.Failed}); err == nil {
		t.Fatal("a Put with Redis down succeeded")
	}
	if _, _, err := s.Get(ctx, "u"); err == nil {
		t.Fatal("a Get with Redis down succeeded")
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("two calls with Redis down took %v", d)
	}
}

func next(t *testing.T, seen <-chan bulkprogress.Progress) bulkprogress.Progress {
	t.Helper()
	select {
	case p := <-seen:
		return p
	case <-time.After(5 * time.Second):
		t.Fatal("the watcher saw nothing")
		return bulkprogress.Progress{}
	}
}

package advisor_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/advisor"
	"github.com/advisorhq/gateway/internal/apperr"
)

// gated answers every request once gate is closed, counting them by method and path.
type gated struct {
	gate chan struct{}
	mu   sync.Mutex
	hits map[string]int
}

func newGated(t *testing.T) (*advisor.Client, *gated) {
	t.Helper()
	g := &gated{gate: make(chan struct{}), hits: map[string]int{}}
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	c, err := advisor.New(advisor.Options{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return c, g
}

func (g *gated) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	g.hits[r.Method+" "+r.URL.Path]++
	g.mu.Unlock()
	<-g.gate
	if strings.HasPrefix(r.URL.Path, "/uploads/") {
		return
	}
	_, _ = w.Write([]byte(`{"contacts":[],"id":"x","wid":"w","vault_id":"v","upload_uri":"u"}`))
}

func (g *gated) count(key string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.hits[key]
}

func (g *gated) total() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for _, h := range g.hits {
		n += h
	}
	return n
}

const listW = "GET /v2/top-accounts/w/contacts/"

func TestIdenticalConcurrentReadsShareOneRequest(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name         string
		wids         []string // one concurrent read each
		wantRequests int
	}{
		{"one read", []string{"w"}, 1},
		{"identical reads", []string{"w", "w", "w", "w", "w", "w", "w", "w"}, 1},
		{"distinct reads each go out once", []string{"w", "v", "w", "v", "u"}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, g := newGated(t)
			ctx := advisor.WithCache(context.Background())
			var wg sync.WaitGroup
			for _, wid := range tc.wids {
				wg.Go(func() {
					if _, err := c.Contacts(ctx, wid); err != nil {
						t.Error(err)
					}
				})
			}
			// Hold the answers back until every reader has asked: later readers must wait for
			// the first one's request rather than make their own.
			for g.total() < tc.wantRequests {
				time.Sleep(time.Millisecond)
			}
			close(g.gate)
			wg.Wait()
			if got := g.total(); got != tc.wantRequests {
				t.Errorf("got %d requests, want %d", got, tc.wantRequests)
			}
		})
	}
}

func TestAWriteInvalidatesWhatTheRequestRead(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		write func(context.Context, *advisor.Client) error
	}{
		{"a POST", func(ctx context.Context, c *advisor.Client) error {
			_, err := c.CreateContact(ctx, "w", []byte(`{}`))
			return err
		}},
		{"a PUT", func(ctx context.Context, c *advisor.Client) error {
			_, err := c.UpdateContact(ctx, "w", "c1", []byte(`{}`))
			return err
		}},
		{"a PATCH", func(ctx context.Context, c *advisor.Client) error {
			_, err := c.UpdateDocument(ctx, "w", "v", []byte(`{}`))
			return err
		}},
		{"a DELETE", func(ctx context.Context, c *advisor.Client) error { return c.DeleteDocument(ctx, "w", "v") }},
		{"an upload", func(ctx context.Context, c *advisor.Client) error {
			return c.UploadFile(ctx, c.BaseURL()+"/uploads/w/v?signature=s", "text/csv", strings.NewReader("a"), 1)
		}},
		{"a write to another top account", func(ctx context.Context, c *advisor.Client) error {
			_, err := c.CreateContact(ctx, "other", []byte(`{}`))
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, g := newGated(t)
			close(g.gate)
			ctx := advisor.WithCache(context.Background())
			derived := 0
			derive := func() (int, error) { derived++; return derived, nil }
			for range 2 {
				if _, err := c.Contacts(ctx, "w"); err != nil {
					t.Fatal(err)
				}
				if _, err := advisor.Memo(ctx, "derived", derive); err != nil {
					t.Fatal(err)
				}
			}
			if got := g.count(listW); got != 1 || derived != 1 {
				t.Fatalf("before the write: got %d reads and %d computations, want 1 and 1", got, derived)
			}
			if err := tc.write(ctx, c); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Contacts(ctx, "w"); err != nil {
				t.Fatal(err)
			}
			v, _ := advisor.Memo(ctx, "derived", derive)
			if got := g.count(listW); got != 2 || v != 2 {
				t.Errorf("after the write: got %d reads and value %d, want 2 and 2 (both read afresh)", got, v)
			}
		})
	}
}

func TestAFailedWriteInvalidatesToo(t *testing.T) {
	t.Parallel()
	// A write whose answer is an error may still have been applied.
	srv, requests := flaky(200, 503, 200)
	defer srv.Close()
	c, err := advisor.New(advisor.Options{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx := advisor.WithCache(context.Background())
	_, _ = c.Contacts(ctx, "w")
	if _, err := c.CreateContact(ctx, "w", []byte(`{}`)); apperr.CodeOf(err) != apperr.UpstreamUnavailable {
		t.Fatalf("got %v, want the write to fail UPSTREAM_UNAVAILABLE", err)
	}
	_, _ = c.Contacts(ctx, "w")
	if got := requests.Load(); got != 3 {
		t.Errorf("got %d requests, want 3: the read after the failed write goes out again", got)
	}
}

func TestWithoutACacheReadsFailAndWritesGoOut(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name         string
		call         func(context.Context, *advisor.Client) error
		wantCode     apperr.Code // "": succeeds
		wantRequests int
	}{
		{"a read fails before it is made", func(ctx context.Context, c *advisor.Client) error {
			_, err := c.Contacts(ctx, "w")
			return err
		}, apperr.Internal, 0},
		{"a memo fails", func(ctx context.Context, _ *advisor.Client) error {
			_, err := advisor.Memo(ctx, "k", func() (int, error) { return 1, nil })
			return err
		}, apperr.Internal, 0},
		{"a write has nothing to clear", func(ctx context.Context, c *advisor.Client) error {
			_, err := c.CreateContact(ctx, "w", []byte(`{}`))
			return err
		}, "", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, g := newGated(t)
			close(g.gate)
			err := tc.call(context.Background(), c)
			if got := apperr.CodeOf(err); tc.wantCode == "" && err != nil || tc.wantCode != "" && got != tc.wantCode {
				t.Errorf("got %v, want code %q", err, tc.wantCode)
			}
			if tc.wantCode == apperr.Internal {
				e, _ := apperr.As(err)
				if !errors.Is(err, advisor.ErrNoCache) || e == nil || e.Message != "Internal error" {
					t.Errorf("got %v, want a generic INTERNAL message whose logged cause is advisor.ErrNoCache", err)
				}
			}
			if got := g.total(); got != tc.wantRequests {
				t.Errorf("got %d requests, want %d", got, tc.wantRequests)
			}
		})
	}
}

func TestMemoSharesValuesAndErrorsPerKey(t *testing.T) {
	t.Parallel()
	ctx := advisor.WithCache(context.Background())
	boom := errors.New("boom")
	var calls atomic.Int32
	compute := func(v int, err error) func() (int, error) {
		return func() (int, error) { calls.Add(1); return v, err }
	}
	for _, tc := range []struct {
		key       any
		compute   func() (int, error)
		want      int
		wantErr   error
		wantCalls int32
	}{
		{"a", compute(1, nil), 1, nil, 1},
		{"a", compute(2, nil), 1, nil, 1}, // remembered
		{"b", compute(0, boom), 0, boom, 2},
		{"b", compute(3, nil), 0, boom, 2},                    // the error is remembered too
		{struct{ k string }{"a"}, compute(4, nil), 4, nil, 3}, // keys of different types never meet
	} {
		got, err := advisor.Memo(ctx, tc.key, tc.compute)
		if got != tc.want || !errors.Is(err, tc.wantErr) || calls.Load() != tc.wantCalls {
			t.Errorf("Memo(%v): got %d, %v after %d computations; want %d, %v after %d",
				tc.key, got, err, calls.Load(), tc.want, tc.wantErr, tc.wantCalls)
		}
	}
}

func TestAPanickingComputationReleasesItsWaiters(t *testing.T) {
	t.Parallel()
	ctx := advisor.WithCache(context.Background())
	started, done := make(chan struct{}), make(chan error)
	go func() {
		defer func() { _ = recover() }()
		_, _ = advisor.Memo(ctx, "k", func() (int, error) {
			close(started)
			<-done
			panic("boom")
		})
	}()
	<-started
	waiter := make(chan error)
	go func() {
		_, err := advisor.Memo(ctx, "k", func() (int, error) { return 1, nil })
		waiter <- err
	}()
	close(done)
	if err := <-waiter; apperr.CodeOf(err) != apperr.Internal {
		t.Errorf("the waiter got %v, want INTERNAL", err)
	}
}

package advisor_test

import (
	"context"
	"fmt"
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

func TestAnOperationsBudgetBoundsItsUpstreamRequests(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name         string
		budget       int   // 0: no budget in the context
		statuses     []int // the upstream's first answers; 200 after them
		calls        int
		sameRead     bool
		concurrent   bool
		wantRequests int32
		wantRefused  int
	}{
		{"every request takes one and the next call is refused before it is made", 3, nil, 4, false, false, 3, 1},
		{"retries take one each", 2, []int{500, 500, 500}, 2, false, false, 2, 1},
		{"reads answered by the request cache take none", 1, nil, 5, true, false, 1, 0},
		{"concurrent calls share it", 50, nil, 200, false, true, 50, 150},
		{"no budget is unlimited", 0, nil, 100, false, false, 100, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, requests := flaky(tc.statuses...)
			defer srv.Close()
			c, err := advisor.New(advisor.Options{BaseURL: srv.URL, Backoff: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			ctx := advisor.WithCache(context.Background())
			if tc.budget > 0 {
				ctx = advisor.WithBudget(ctx, tc.budget)
			}
			var mu sync.Mutex
			var refused []error
			call := func(i int) {
				wid := fmt.Sprint("w", i)
				if tc.sameRead {
					wid = "w"
				}
				_, err := c.Contacts(ctx, wid)
				if apperr.CodeOf(err) == apperr.OperationLimitExceeded {
					mu.Lock()
					refused = append(refused, err)
					mu.Unlock()
				}
			}
			var wg sync.WaitGroup
			for i := range tc.calls {
				if tc.concurrent {
					wg.Go(func() { call(i) })
				} else {
					call(i)
				}
			}
			wg.Wait()
			if got := requests.Load(); got != tc.wantRequests {
				t.Errorf("got %d requests upstream, want %d", got, tc.wantRequests)
			}
			if len(refused) != tc.wantRefused {
				t.Errorf("got %d calls refused, want %d", len(refused), tc.wantRefused)
			}
			want := fmt.Sprintf("This operation needs more than %d requests to the Advisor service (%s)", tc.budget, advisor.BudgetSetting)
			for _, err := range refused {
				wantCode(t, err, apperr.OperationLimitExceeded, want)
			}
		})
	}
}

func TestRequestsInFlightAreCappedForTheWholeClient(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name          string
		maxConcurrent int
		want          int32
	}{
		{"the default cap", 0, advisor.DefaultMaxConcurrent},
		{"a set cap", 10, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var inFlight, most atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n := inFlight.Add(1)
				defer inFlight.Add(-1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				// Held until the cap's worth is in flight (or half a second has passed): a
				// fixed pause let a starved machine (CI under -race) dial too few
				// connections within it to reach half the cap.
				for held := time.Now(); inFlight.Load() < tc.want && time.Since(held) < 500*time.Millisecond; {
					time.Sleep(time.Millisecond)
				}
				_, _ = w.Write([]byte(`{"contacts":[]}`))
			}))
			defer srv.Close()
			c, err := advisor.New(advisor.Options{BaseURL: srv.URL, MaxConcurrent: tc.maxConcurrent})
			if err != nil {
				t.Fatal(err)
			}
			var failed atomic.Int32
			var wg sync.WaitGroup
			for i := range 500 {
				wg.Go(func() {
					var err error
					if i%5 == 0 { // presigned uploads count against the same cap
						err = c.UploadFile(advisor.WithCache(context.Background()), srv.URL+"/uploads/w/v?signature=s", "text/csv", strings.NewReader("a,b\n"), 4)
					} else {
						_, err = c.Contacts(advisor.WithCache(context.Background()), fmt.Sprint("w", i))
					}
					if err != nil {
						failed.Add(1)
						t.Error(err)
					}
				})
			}
			wg.Wait()
			if got := most.Load(); got > tc.want || got < tc.want/2 {
				t.Errorf("got at most %d requests in flight, want %d at most (and at least half as many)", got, tc.want)
			}
			if got := failed.Load(); got != 0 {
				t.Errorf("got %d of 500 calls failed, want all complete", got)
			}
		})
	}
}

func TestACallerThatGivesUpStopsWaitingForItsTurn(t *testing.T) {
	t.Parallel()
	var requests atomic.Int32
	started, release := make(chan struct{}), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if requests.Add(1) == 1 {
			close(started)
		}
		<-release
	}))
	defer srv.Close()
	defer close(release)
	c, err := advisor.New(advisor.Options{BaseURL: srv.URL, MaxConcurrent: 1})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = c.Contacts(advisor.WithCache(context.Background()), "holds-the-only-slot") }()
	<-started
	ctx, cancel := context.WithCancel(advisor.WithCache(context.Background()))
	time.AfterFunc(20*time.Millisecond, cancel)
	_, err = c.CreateTopAccount(ctx, "e", "n")
	wantCode(t, err, apperr.UpstreamUnavailable, "The request was cancelled")
	if e, _ := apperr.As(err); e != nil && e.Outcome != "" {
		t.Errorf("got outcome %q, want none: the write never left", e.Outcome)
	}
	if got := requests.Load(); got != 1 {
		t.Errorf("got %d requests upstream, want 1", got)
	}
}

package memo_test

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/advisorhq/gateway/internal/memo"
)

func TestDoComputesOncePerKeyForConcurrentCallers(t *testing.T) {
	var g memo.Group[string, int]
	var calls atomic.Int32
	release := make(chan struct{})
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			v, err := g.Do("k", func() (int, error) {
				calls.Add(1)
				<-release
				return 7, nil
			})
			if v != 7 || err != nil {
				t.Errorf("got %d, %v", v, err)
			}
		})
	}
	close(release)
	wg.Wait()
	if calls.Load() != 1 {
		t.Errorf("computed %d times, want once", calls.Load())
	}
}

func TestErrorsAreSharedAndClearForgets(t *testing.T) {
	var g memo.Group[int, string]
	boom := errors.New("boom")
	n := 0
	compute := func() (string, error) { n++; return "", boom }
	_, err1 := g.Do(1, compute)
	_, err2 := g.Do(1, compute)
	if err1 != boom || err2 != boom || n != 1 {
		t.Fatalf("errors %v %v after %d computations, want boom twice after one", err1, err2, n)
	}
	g.Clear()
	_, _ = g.Do(1, compute)
	if n != 2 {
		t.Errorf("after Clear computed %d times in all, want 2", n)
	}
}

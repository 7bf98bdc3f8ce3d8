package clock_test

import (
	"sync"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/clock"
)

func TestSettableMovesOnlyWhenTold(t *testing.T) {
	start := time.Date(2026, 11, 22, 9, 30, 0, 0, time.UTC)
	c := clock.NewSettable(start)
	if got := c.Now(); !got.Equal(start) {
		t.Fatalf("Now() = %v, want %v", got, start)
	}
	c.Advance(90 * time.Second)
	if got, want := c.Now(), start.Add(90*time.Second); !got.Equal(want) {
		t.Errorf("after Advance(90s), Now() = %v, want %v", got, want)
	}
	back := start.Add(-time.Hour)
	c.Set(back)
	if got := c.Now(); !got.Equal(back) {
		t.Errorf("after Set, Now() = %v, want %v", got, back)
	}
}

func TestSettableIsSafeForConcurrentUse(t *testing.T) {
	start := time.Unix(0, 0)
	c := clock.NewSettable(start)
	now := c.Now // the func() time.Time that production code takes
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(2)
		go func() { defer wg.Done(); c.Advance(time.Millisecond) }()
		go func() { defer wg.Done(); _ = now() }()
	}
	wg.Wait()
	if got, want := c.Now(), start.Add(8*time.Millisecond); !got.Equal(want) {
		t.Errorf("after 8 concurrent Advance(1ms), Now() = %v, want %v", got, want)
	}
}

package sftpd

import (
	"sync"
	"time"
)

// FakeClock is a time source that moves only when a test advances it, for the login throttle
// and the ".part" files' ages. It is declared in a test file of the package itself so that the
// package's own tests and its external ones (sftpd_test) share it; the server keeps a clock of
// its own rather than the gateway's, as it imports nothing of the gateway (deps_test.go).
type FakeClock struct {
	mu  sync.Mutex
	now time.Time
}

// NewFakeClock returns a clock that reads start until it is advanced.
func NewFakeClock(start time.Time) *FakeClock { return &FakeClock{now: start} }

func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *FakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

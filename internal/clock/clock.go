// Package clock provides a settable time source for tests, so that expiry, de-duplication
// windows and time-ordered ids are tested without waiting. It imports nothing of the gateway,
// so the sandbox's tests may use it too.
package clock

import (
	"sync"
	"time"
)

// Settable is a time source that moves only when told to. It is safe for concurrent use; its
// Now method has the shape of the func() time.Time that the gateway and the sandbox take.
type Settable struct {
	mu  sync.Mutex
	now time.Time
}

// NewSettable returns a clock that reads start until it is advanced or set.
func NewSettable(start time.Time) *Settable {
	return &Settable{now: start}
}

// Now returns the clock's current time.
func (c *Settable) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d (backward when d is negative).
func (c *Settable) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Set moves the clock to t, which may be earlier than its current time.
func (c *Settable) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

package ratelimit

import "time"

// Keys is how many callers m keeps a budget for.
func Keys(m *Memory) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.tat)
}

// SetClock has e read the time from now, for its pause after a failed call.
func SetClock(e *Extension, now func() time.Time) { e.now = now }

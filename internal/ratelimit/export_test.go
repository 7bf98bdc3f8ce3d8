package ratelimit

// Keys is how many callers m keeps a budget for.
func Keys(m *Memory) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.tat)
}

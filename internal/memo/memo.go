// Package memo computes a value once per key: the first caller computes it, concurrent and
// later callers get the same value. It is how one request shares its upstream reads.
package memo

import "sync"

// Group remembers one value (and error) per key until Clear. The zero value is ready to use.
type Group[K comparable, V any] struct {
	mu      sync.Mutex
	entries map[K]*entry[V]
}

type entry[V any] struct {
	done  chan struct{}
	value V
	err   error
}

// Do returns the value for key, calling compute if no caller has. Callers that arrive while
// it runs wait for it.
func (g *Group[K, V]) Do(key K, compute func() (V, error)) (V, error) {
	g.mu.Lock()
	if g.entries == nil {
		g.entries = map[K]*entry[V]{}
	}
	e, ok := g.entries[key]
	if !ok {
		e = &entry[V]{done: make(chan struct{})}
		g.entries[key] = e
	}
	g.mu.Unlock()
	if ok {
		<-e.done
		return e.value, e.err
	}
	e.value, e.err = compute()
	close(e.done)
	return e.value, e.err
}

// Clear forgets every value. Computations under way finish for the callers waiting on them.
func (g *Group[K, V]) Clear() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.entries = nil
}

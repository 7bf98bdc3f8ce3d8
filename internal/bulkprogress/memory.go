package bulkprogress

import (
	"context"
	"sync"
	"time"
)

// Memory keeps progress in this process, for a gateway without Redis: one replica, so one
// process answers for all its uploads.
type Memory struct {
	mu      sync.Mutex
	entries map[string]*entry
	now     func() time.Time
}

type entry struct {
	p       Progress
	version uint64 // counts the Puts, so a watcher tells a change from the same progress
	expires time.Time
	// changed is closed and replaced at each Put, waking the watchers.
	changed chan struct{}
}

// NewMemory returns an empty store; now is its clock.
func NewMemory(now func() time.Time) *Memory {
	return &Memory{entries: map[string]*entry{}, now: now}
}

func (m *Memory) Put(_ context.Context, p Progress) error {
	if err := check(p); err != nil {
		return err
	}
	now := m.now()
	p.UpdatedAt = now
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expire(now)
	e := m.entries[p.ID]
	if e == nil {
		e = &entry{changed: make(chan struct{})}
		m.entries[p.ID] = e
	}
	e.p, e.expires = p, now.Add(TTL)
	e.version++
	close(e.changed)
	e.changed = make(chan struct{})
	return nil
}

// expire forgets what expired; Put calls it, so the map holds what the last TTL wrote.
func (m *Memory) expire(now time.Time) {
	for id, e := range m.entries {
		if now.After(e.expires) {
			delete(m.entries, id)
			close(e.changed) // its watchers see it gone
		}
	}
}

func (m *Memory) Get(_ context.Context, id string) (Progress, bool, error) {
	e, ok := m.current(id)
	return e.p, ok, nil
}

// current is a copy of the upload's entry, whose changed channel its next change closes.
func (m *Memory) current(id string) (entry, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.entries[id]
	if e == nil || m.now().After(e.expires) {
		return entry{}, false
	}
	return *e, true
}

func (m *Memory) Watch(ctx context.Context, id string, see func(Progress)) error {
	var version uint64 // Puts count from 1
	for {
		e, ok := m.current(id)
		if !ok {
			if version > 0 {
				return nil // expired under its watcher: nothing more will come
			}
			return ErrUnknown
		}
		if e.version != version {
			see(e.p)
			version = e.version
		}
		if e.p.Phase.Final() {
			return nil
		}
		select {
		case <-e.changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

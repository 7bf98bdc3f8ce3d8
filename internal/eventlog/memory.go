package eventlog

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"
)

// Memory is the in-process log: bounded history, de-duplication for a window, and wake-ups
// for watchers in the same process.
type Memory struct {
	mu       sync.Mutex
	records  []Record // oldest first, at most max
	max      int
	dedupTTL time.Duration
	seen     map[string]seenEntry
	last     ID
	trimmed  string
	now      func() time.Time
	watchers map[*func()]struct{}
}

type seenEntry struct {
	id      string
	expires time.Time
}

// NewMemory returns an empty log keeping at most max records and remembering bodies for
// dedupTTL. now may be nil for the wall clock.
func NewMemory(max int, dedupTTL time.Duration, now func() time.Time) *Memory {
	if now == nil {
		now = time.Now
	}
	return &Memory{max: max, dedupTTL: dedupTTL, seen: map[string]seenEntry{}, now: now, watchers: map[*func()]struct{}{}}
}

func (m *Memory) Append(_ context.Context, firm string, body []byte) (string, bool, error) {
	if firm == "" {
		return "", false, fmt.Errorf("append an event: %w", ErrNoFirm)
	}
	key := digest(firm, body)
	m.mu.Lock()
	now := m.now()
	if s, ok := m.seen[key]; ok && now.Before(s.expires) {
		m.mu.Unlock()
		return s.id, true, nil
	}
	m.expire(now)
	id := ID{MS: uint64(now.UnixMilli())}
	if !m.last.Less(id) {
		id = ID{MS: m.last.MS, Seq: m.last.Seq + 1}
	}
	m.last = id
	m.records = append(m.records, Record{ID: id.String(), Firm: firm, Body: append([]byte(nil), body...)})
	if len(m.records) > m.max {
		m.trimmed = m.records[len(m.records)-m.max-1].ID
		// Copy rather than reslice, so the dropped records' memory is freed.
		m.records = append([]Record(nil), m.records[len(m.records)-m.max:]...)
	}
	m.seen[key] = seenEntry{id: id.String(), expires: now.Add(m.dedupTTL)}
	watchers := make([]func(), 0, len(m.watchers))
	for w := range m.watchers {
		watchers = append(watchers, *w)
	}
	m.mu.Unlock()
	for _, wake := range watchers {
		wake()
	}
	return id.String(), false, nil
}

// expire forgets bodies whose window has passed; called with mu held, on appends, so the map
// stays as small as the window allows without a goroutine of its own.
func (m *Memory) expire(now time.Time) {
	for k, s := range m.seen {
		if !now.Before(s.expires) {
			delete(m.seen, k)
		}
	}
}

func (m *Memory) After(_ context.Context, after string, n int) ([]Record, error) {
	n = max(n, 0) // as Redis's COUNT: none for n <= 0, rather than a panic
	from, err := cursor(after)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	i := sort.Search(len(m.records), func(i int) bool { return from.Less(mustParse(m.records[i].ID)) })
	end := min(len(m.records), i+n)
	return append([]Record(nil), m.records[i:end]...), nil
}

func (m *Memory) Before(_ context.Context, before string, n int) ([]Record, error) {
	n = max(n, 0)
	m.mu.Lock()
	defer m.mu.Unlock()
	end := len(m.records)
	if before != "" {
		to, err := ParseID(before)
		if err != nil {
			return nil, err
		}
		end = sort.Search(len(m.records), func(i int) bool { return !mustParse(m.records[i].ID).Less(to) })
	}
	out := make([]Record, 0, min(n, end))
	for i := end - 1; i >= 0 && len(out) < n; i-- {
		out = append(out, m.records[i])
	}
	return out, nil
}

func (m *Memory) Bounds(context.Context) (string, string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.records) == 0 {
		return Zero, Zero, nil
	}
	return m.records[0].ID, m.records[len(m.records)-1].ID, nil
}

func (m *Memory) Trimmed(context.Context) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.trimmed == "" {
		return Zero, nil
	}
	return m.trimmed, nil
}

func (m *Memory) Watch(ctx context.Context, wake func()) {
	key := &wake
	m.mu.Lock()
	m.watchers[key] = struct{}{}
	m.mu.Unlock()
	<-ctx.Done()
	m.mu.Lock()
	delete(m.watchers, key)
	m.mu.Unlock()
}

func (m *Memory) Ping(context.Context) error { return nil }

// cursor reads an "after" id; "" means from the beginning.
func cursor(after string) (ID, error) {
	if after == "" {
		return ID{}, nil
	}
	return ParseID(after)
}

func mustParse(s string) ID {
	id, _ := ParseID(s)
	return id
}

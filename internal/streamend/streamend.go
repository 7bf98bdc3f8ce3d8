// Package streamend carries what the transport must know of a subscription's stream beyond its
// responses, from the code that feeds the stream to the transport that tells the client: why
// it ended, and where each response leaves it. gqlgen ends a subscription quietly when its
// channel closes; a subscriber cut off for falling behind must instead learn why and where to
// resume.
package streamend

import (
	"context"
	"sync"
)

type key struct{}

// Slot holds the reason a stream ended, to be taken once, and the stream's position: the id of
// the last event a response was made of.
type Slot struct {
	mu    sync.Mutex
	err   error
	taken bool
	// pos is the position after the last response taken; queued holds the ids of the events
	// put in the stream and not yet made into a response, oldest first.
	pos    string
	queued []string
}

// With returns ctx carrying a new slot.
func With(ctx context.Context) context.Context {
	return context.WithValue(ctx, key{}, &Slot{})
}

// From returns ctx's slot, nil when it has none. A nil slot's methods do nothing.
func From(ctx context.Context) *Slot {
	s, _ := ctx.Value(key{}).(*Slot)
	return s
}

// Reporter returns what records the reason in ctx's slot; it does nothing when ctx has none.
func Reporter(ctx context.Context) func(error) {
	return From(ctx).End
}

// End records why the stream ended; only the first reason is kept.
func (s *Slot) End(err error) {
	if s == nil || err == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = err
	}
}

// Take returns the reason recorded in ctx's slot the first time it is asked, nil after that
// or when there is none.
func Take(ctx context.Context) error {
	s := From(ctx)
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.taken {
		return nil
	}
	if s.err != nil {
		s.taken = true
	}
	return s.err
}

// Start sets the position before the stream's first event: the last event its subscriber is
// taken to have seen.
func (s *Slot) Start(last string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pos = last
}

// Sent records that the event id is put in the stream. It must be called before the event can
// be taken from the stream: the response made of it may otherwise be counted first.
func (s *Slot) Sent(id string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queued = append(s.queued, id)
}

// Advance moves the position past the oldest event sent: one response was made of it. The
// transport calls it once per response of a stream fed by events.
func (s *Slot) Advance() string {
	if s == nil {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queued) > 0 {
		s.pos = s.queued[0]
		s.queued[0] = ""
		s.queued = s.queued[1:]
		if len(s.queued) == 0 {
			s.queued = s.queued[:0:0] // let the backing array go rather than creep along it
		}
	}
	return s.pos
}

// Position is the id of the last event a response was made of, or the start; "" when the
// stream is not fed by events.
func (s *Slot) Position() string {
	if s == nil {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pos
}

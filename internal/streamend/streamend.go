// Package streamend carries why a subscription's stream ended, from the code that closes the
// stream to the transport that tells the client. gqlgen ends a subscription quietly when its
// channel closes; a subscriber cut off for falling behind must instead learn why and where to
// resume.
package streamend

import (
	"context"
	"sync"
)

type key struct{}

// Slot holds the reason a stream ended, to be taken once.
type Slot struct {
	mu    sync.Mutex
	err   error
	taken bool
}

// With returns ctx carrying a new slot.
func With(ctx context.Context) context.Context {
	return context.WithValue(ctx, key{}, &Slot{})
}

// Reporter returns what records the reason in ctx's slot; it does nothing when ctx has none.
func Reporter(ctx context.Context) func(error) {
	s, _ := ctx.Value(key{}).(*Slot)
	return func(err error) {
		if s == nil || err == nil {
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.err == nil {
			s.err = err
		}
	}
}

// Take returns the reason recorded in ctx's slot the first time it is asked, nil after that
// or when there is none.
func Take(ctx context.Context) error {
	s, _ := ctx.Value(key{}).(*Slot)
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

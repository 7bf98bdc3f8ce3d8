package graph

import (
	"context"
	"sync"
)

// Feed is what a subscription's resolver tells the transport of its stream beyond the values it
// sends: why the stream ended, and where each response leaves it. gqlgen ends a subscription
// quietly when its channel closes; a subscriber cut off for falling behind or by an outage must
// instead learn why, and where to resume. The transport makes one for each execution of a
// subscription (Track) and reads it as a transport.Feed; the resolvers fill it, the hub's
// subscriptions as an eventhub.Tracker.
type Feed struct {
	mu  sync.Mutex
	err error
	// pos is the position after the last response advanced past; queued holds the ids of the
	// events put in the stream and not yet made into a response, oldest first.
	pos    string
	queued []string
}

type feedKey struct{}

// Track returns ctx carrying a new Feed for the subscription about to be dispatched in it, and
// the Feed, which its resolvers fill.
func Track(ctx context.Context) (context.Context, *Feed) {
	f := &Feed{}
	return context.WithValue(ctx, feedKey{}, f), f
}

// feedOf is the Feed the transport gave the subscription resolved in ctx; nil, whose methods do
// nothing, when it gave none.
func feedOf(ctx context.Context) *Feed {
	f, _ := ctx.Value(feedKey{}).(*Feed)
	return f
}

// End records why the stream ended; only the first reason is kept.
func (f *Feed) End(err error) {
	if f == nil || err == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err == nil {
		f.err = err
	}
}

// Err is why the resolver ended the stream, nil when it has not said.
func (f *Feed) Err() error {
	if f == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// Start sets the position before the stream's first event: the last event its subscriber is
// taken to have seen.
func (f *Feed) Start(last string) {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pos = last
}

// Sent records that the event id is put in the stream. It must be called before the event can
// be taken from the stream: the response made of it may otherwise be counted first.
func (f *Feed) Sent(id string) {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queued = append(f.queued, id)
}

// Advance moves the position past the oldest event sent: one response was made of it. The
// transport calls it once per response of a stream fed by events.
func (f *Feed) Advance() string {
	if f == nil {
		return ""
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.queued) > 0 {
		f.pos = f.queued[0]
		f.queued[0] = ""
		f.queued = f.queued[1:]
		if len(f.queued) == 0 {
			f.queued = f.queued[:0:0] // let the backing array go rather than creep along it
		}
	}
	return f.pos
}

// Position is the id of the last event a response was made of, or the start; "" when the
// stream is not fed by events.
func (f *Feed) Position() string {
	if f == nil {
		return ""
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pos
}

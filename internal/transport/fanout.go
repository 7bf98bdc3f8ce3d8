package transport

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/streamend"
)

// Share decides whether a subscription may share its execution with others that ask for it in
// the same words: ok is false when a subscriber joining a running stream would see something
// other than a fresh one would (a resume point, a first snapshot). scope names whatever besides
// the document and its variables shapes the answers: the caller, when resolvers consult it.
type Share func(ctx context.Context, opCtx *graphql.OperationContext) (scope string, ok bool)

// fanout runs subscriptions. Those that Share allows and that agree in document, operation,
// variables and scope run as one group: executed once, each response encoded once, and the
// same bytes handed to every member's connection. Executing a selection per subscriber is what
// bounds a replica at some thousands of subscribers; sharing leaves the cost per subscriber at
// queueing and writing a frame.
type fanout struct {
	share   Share
	buffer  int
	streams *Streams // counts the open subscriptions, and tracks the groups' goroutines

	mu     sync.Mutex
	groups map[string]*group
}

// defaultSubscriberBuffer is how many responses a member may have waiting to be written when
// no buffer is configured; it matches the event hub's.
const defaultSubscriberBuffer = 256

func newFanout(share Share, buffer int, streams *Streams) *fanout {
	if buffer <= 0 {
		buffer = defaultSubscriberBuffer
	}
	return &fanout{share: share, buffer: buffer, streams: streams, groups: map[string]*group{}}
}

// sink is a member's connection: where its results go.
type sink interface {
	// deliver queues r for the member without waiting, and reports false when the member
	// already has the buffer's worth waiting: it is then ended as a slow consumer.
	deliver(m *member, r *result) bool
	// end tells the member that its stream ended with outcome, after final when there is one
	// (a response with errors and no data, the stream's last word). It is called once, and
	// never after the member left.
	end(m *member, final *result, outcome streamOutcome)
}

// result is one response of a group, encoded once for all its members.
type result struct {
	json []byte // the response
	// errors is the response's errors alone, for a final result: graphql-transport-ws sends
	// them as the error message's payload.
	errors []byte
	// pos is the stream's position after this response: the id of the event it was made of,
	// "" for a stream not fed by events.
	pos string

	sseOnce sync.Once
	sse     []byte

	deflateOnce sync.Once
	deflate     []byte // see deflated
}

// sseEvent is the result as a graphql-sse `next` event, made once for all SSE members.
func (r *result) sseEvent() []byte {
	r.sseOnce.Do(func() {
		b := make([]byte, 0, len(r.json)+len(sseNextPrefix)+2)
		b = append(b, sseNextPrefix...)
		b = append(b, r.json...)
		r.sse = append(b, '\n', '\n')
	})
	return r.sse
}

const sseNextPrefix = "event: next\ndata: "

func newResult(resp *graphql.Response, pos string, final bool) *result {
	r := &result{json: mustJSON(resp), pos: pos}
	if final {
		r.errors = mustJSON(resp.Errors)
	}
	return r
}

// group is one execution and the members it serves.
type group struct {
	f      *fanout
	key    string // "" for a group of one that no one may join
	cancel context.CancelFunc

	mu         sync.Mutex
	members    map[*member]struct{}
	dispatched bool   // the resolvers have subscribed: members count as open
	ended      bool   // no member may join
	pos        string // the position after the last result handed out
}

// member is one subscriber of a group.
type member struct {
	g    *group
	sink sink
	// Guarded by g.mu.
	counted bool
	left    bool
	// pos is the position after the last result queued for the member: where it resumes if it
	// is ended.
	pos string
	// pending counts the member's results queued and not yet written; guarded by its
	// connection's outbox.
	pending int
	// gone is set once the member's client left it: its results still queued are not worth
	// writing (the client may already reuse its operation's id).
	gone atomic.Bool
}

// subscribe has sink receive the results of the subscription opCtx describes, run in ctx,
// sharing an execution when Share allows. The stream runs until it ends, or the member leaves
// (its connection ends it, or it falls behind).
func (f *fanout) subscribe(ctx context.Context, exec graphql.GraphExecutor, opCtx *graphql.OperationContext, s sink) *member {
	key := f.key(ctx, opCtx)
	m := &member{sink: s}
	f.mu.Lock()
	if g := f.groups[key]; key != "" && g != nil && g.join(m) {
		f.mu.Unlock()
		return m
	}
	// The execution outlives the member that started it; it carries that member's values (the
	// caller, which the key includes) and ends when its last member leaves.
	gctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	g := &group{f: f, key: key, cancel: cancel, members: map[*member]struct{}{}}
	g.join(m)
	if key != "" {
		f.groups[key] = g
	}
	f.mu.Unlock()
	// Started from a stream that is open, so the count Streams.Wait waits on is above zero.
	f.streams.executions.Add(1)
	f.streams.wg.Go(func() {
		defer f.streams.executions.Add(-1)
		g.run(streamend.With(gctx), exec, opCtx)
	})
	return m
}

// key is what subscriptions that may share an execution agree on; "" when opCtx's may not.
func (f *fanout) key(ctx context.Context, opCtx *graphql.OperationContext) string {
	if f.share == nil {
		return ""
	}
	scope, ok := f.share(ctx, opCtx)
	if !ok {
		return ""
	}
	vars, err := json.Marshal(opCtx.Variables) // a map marshals with its keys sorted
	if err != nil {
		return ""
	}
	// Lengths first, so that no choice of the parts can make two different tuples one string.
	return fmt.Sprintf("%d:%d:%d:%s%s%s%s", len(opCtx.RawQuery), len(opCtx.OperationName), len(vars),
		opCtx.RawQuery, opCtx.OperationName, vars, scope)
}

// join adds m, unless the group has ended; called with f.mu held.
func (g *group) join(m *member) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ended {
		return false
	}
	m.g = g
	m.pos = g.pos
	g.members[m] = struct{}{}
	if g.dispatched {
		m.counted = true
		g.f.streams.subscriptions.Add(1)
	}
	return true
}

// leave takes m out of its group, for its client no longer wants it; the group's execution
// stops when no member is left.
func (m *member) leave() {
	m.gone.Store(true)
	g := m.g
	g.mu.Lock()
	empty := g.remove(m)
	g.mu.Unlock()
	if empty {
		g.stop()
	}
}

// remove takes m out and reports whether it was the last member; called with g.mu held. A
// group without members takes no more: a member joining now would never be served.
func (g *group) remove(m *member) bool {
	if m.left {
		return false
	}
	m.left = true
	delete(g.members, m)
	if m.counted {
		g.f.streams.subscriptions.Add(-1)
	}
	if len(g.members) > 0 || g.ended {
		return false
	}
	g.ended = true
	return true
}

// stop ends the execution of a group that ended, and forgets it.
func (g *group) stop() {
	g.cancel()
	if g.key == "" {
		return
	}
	g.f.mu.Lock()
	defer g.f.mu.Unlock()
	if g.f.groups[g.key] == g {
		delete(g.f.groups, g.key)
	}
}

// run executes the group's operation and hands each response to the members, until the stream
// ends or the last member leaves.
func (g *group) run(ctx context.Context, exec graphql.GraphExecutor, opCtx *graphql.OperationContext) {
	defer g.cancel()
	responses, ctx := exec.DispatchOperation(ctx, opCtx)
	slot := streamend.From(ctx)
	g.mu.Lock()
	g.dispatched = true
	g.pos = slot.Position()
	for m := range g.members {
		m.pos = g.pos
		if !m.counted {
			m.counted = true
			g.f.streams.subscriptions.Add(1)
		}
	}
	g.mu.Unlock()
	for {
		resp := responses(ctx)
		if ctx.Err() != nil {
			return // every member left
		}
		if resp == nil {
			g.finish(nil, streamDone)
			return
		}
		final := len(resp.Data) == 0 && len(resp.Errors) > 0
		if final {
			outcome := streamFailed
			if hasCode(resp.Errors, apperr.EventsUnavailable) {
				outcome = streamUnavailable
			}
			g.finish(newResult(resp, slot.Position(), true), outcome)
			return
		}
		g.broadcast(newResult(resp, slot.Advance(), false))
	}
}

// broadcast queues r for every member; a member that cannot take it is ended as a slow
// consumer, and nobody waits for it.
func (g *group) broadcast(r *result) {
	var slow []*member
	g.mu.Lock()
	g.pos = r.pos
	for m := range g.members {
		if m.sink.deliver(m, r) {
			m.pos = r.pos
			continue
		}
		slow = append(slow, m)
	}
	empty := false
	for _, m := range slow {
		empty = g.remove(m) || empty
		m.sink.end(m, slowConsumer(g.f.buffer, m.pos), streamFailed)
	}
	g.mu.Unlock()
	if empty {
		g.stop()
	}
}

// finish ends every member's stream: after final when there is one.
func (g *group) finish(final *result, outcome streamOutcome) {
	g.mu.Lock()
	g.ended = true
	members := make([]*member, 0, len(g.members))
	for m := range g.members {
		g.remove(m)
		members = append(members, m)
	}
	g.mu.Unlock()
	g.stop()
	for _, m := range members {
		m.sink.end(m, final, outcome)
	}
}

// slowConsumer is the last word to a member that fell buffer responses behind: where to resume
// without loss when its stream is fed by events.
func slowConsumer(buffer int, pos string) *result {
	msg := fmt.Sprintf("The subscription fell more than %d events behind and was ended; subscribe again", buffer)
	if pos != "" {
		msg = fmt.Sprintf("The subscription fell more than %d events behind and was ended; subscribe again with after: %q (the last event delivered) to resume without loss", buffer, pos)
	}
	resp := &graphql.Response{Errors: gqlerror.List{{Message: msg, Extensions: map[string]any{"code": apperr.SlowConsumer}}}}
	return newResult(resp, pos, true)
}

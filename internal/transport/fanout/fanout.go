// Package fanout runs GraphQL subscriptions for the streaming transports, sharing one execution
// among the subscribers that ask for the same thing: each response is executed and encoded
// once, and the same bytes handed to every member's connection, which queues them without
// waiting. A member that falls behind is ended alone, told where to resume.
package fanout

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/advisorhq/gateway/internal/apperr"
)

// Share decides whether a subscription may share its execution with others that ask for it in
// the same words: ok is false when a subscriber joining a running stream would see something
// other than a fresh one would (a resume point, a first snapshot). scope names whatever besides
// the document and its variables shapes the answers: the caller, when resolvers consult it.
type Share func(ctx context.Context, opCtx *graphql.OperationContext) (scope string, ok bool)

// A Feed is what the code that feeds a subscription's stream (its resolver) tells of it beyond
// its responses: where each response leaves the stream, and why the stream ended. gqlgen ends a
// subscription quietly when its resolver's channel closes; a subscriber cut off for falling
// behind, or by an outage, must instead learn why and where to resume.
type Feed interface {
	// Position is the id of the last event a response was made of, or of where the stream
	// started; "" when no events feed it.
	Position() string
	// Advance moves the position past the event the next response is made of, and returns it.
	// It is called once per response.
	Advance() string
	// Err is why the stream's feeder ended it, once its responses have ended; nil when it ended
	// by itself.
	Err() error
}

// Track gives a subscription about to be dispatched in ctx its Feed, and the context its
// resolvers find the Feed in to fill it. gqlgen calls resolvers with the context the operation
// is dispatched in and nothing else, so that is the one way from a dispatcher to a resolver.
type Track func(ctx context.Context) (context.Context, Feed)

// noFeed is the Feed of a subscription dispatched without Track: no positions, no reasons.
type noFeed struct{}

func (noFeed) Position() string { return "" }
func (noFeed) Advance() string  { return "" }
func (noFeed) Err() error       { return nil }

// Fanout runs subscriptions. Those that Share allows and that agree in document, operation,
// variables and scope run as one group: executed once, each response encoded once, and the
// same bytes handed to every member's connection. Executing a selection per subscriber is what
// bounds a replica at some thousands of subscribers; sharing leaves the cost per subscriber at
// queueing and writing a frame.
type Fanout struct {
	share  Share
	track  Track
	buffer int
	counts *Counts
	// running tracks the executions' goroutines, so that shutting down can wait for them.
	running *sync.WaitGroup

	mu     sync.Mutex
	groups map[string]*group
}

// Counts counts the open subscriptions and the executions serving them, for metrics and for
// shutting down; a fanout adds to it.
type Counts struct {
	// subscriptions counts the subscriptions whose stream has begun (their resolvers
	// subscribed); executions, the executions serving them.
	subscriptions, executions atomic.Int64
}

// Subscriptions counts the open subscriptions: a subscriber counts from the moment its resolver
// has subscribed, so an event stored after that reaches it.
func (c *Counts) Subscriptions() int { return int(c.subscriptions.Load()) }

// Executions counts the executions serving the subscriptions: as many as the subscriptions when
// none are shared, one for each operation, variables and caller when all are.
func (c *Counts) Executions() int { return int(c.executions.Load()) }

// defaultSubscriberBuffer is how many responses a member may have waiting to be written when
// no buffer is configured; it matches the event hub's.
const defaultSubscriberBuffer = 256

// New returns a fanout that shares the executions share allows, gives each execution the Feed
// track makes (nil: none), ends a member that has buffer responses waiting (0: 256), counts in
// counts and runs its executions on goroutines running tracks.
func New(share Share, track Track, buffer int, counts *Counts, running *sync.WaitGroup) *Fanout {
	if buffer <= 0 {
		buffer = defaultSubscriberBuffer
	}
	return &Fanout{share: share, track: track, buffer: buffer, counts: counts, running: running, groups: map[string]*group{}}
}

// Buffer is how many responses a member may have waiting to be written before it is ended as
// a slow consumer.
func (f *Fanout) Buffer() int { return f.buffer }

// Sink is a member's connection: where its results go.
type Sink interface {
	// Deliver queues r for the member without waiting, and reports false when the member
	// already has the buffer's worth waiting: it is then ended as a slow consumer.
	Deliver(m *Member, r *Result) bool
	// End tells the member that its stream ended with outcome, after final when there is one
	// (a response with errors and no data, the stream's last word). It is called once, and
	// never after the member left.
	End(m *Member, final *Result, outcome Outcome)
}

// Result is one response of a group, encoded once for all its members.
type Result struct {
	JSON []byte // the response
	// Errors is the response's errors alone, for a final result: graphql-transport-ws sends
	// them as the error message's payload.
	Errors []byte
	// Pos is the stream's position after this response: the id of the event it was made of,
	// "" for a stream not fed by events.
	Pos string

	// The result as the transports write it, each made once for all the members written so:
	// a graphql-sse event, and the JSON compressed for WebSockets with permessage-deflate.
	SSE, Deflated Encoded
	// Framed is the result as a transport frames it for members whose frames differ only in a
	// prefix: WebSocket clients number their subscriptions alike (most call their first "1"),
	// so thousands of members of one execution get the same bytes, framed once.
	Framed Framings
}

// Framings holds a result's frames, each made once for every member whose frame begins with the
// same key. It keeps at most maxFramings, so that members that all choose different keys
// cost no more memory than framing each member's for it.
type Framings struct {
	mu   sync.Mutex
	n    int
	keys [maxFramings][]byte
	vals [maxFramings][]byte
}

// maxFramings is how many different frames a result keeps: a client or two numbering its
// subscriptions its own way among thousands that agree.
const maxFramings = 4

// For returns frame(), made only the first time For is asked for key; nil once maxFramings other
// keys have theirs: the caller then frames the result itself. key is kept, and must not change;
// the frame returned is shared, never to be modified.
func (f *Framings) For(key []byte, frame func() []byte) []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.n {
		if bytes.Equal(f.keys[i], key) {
			return f.vals[i]
		}
	}
	if f.n == maxFramings {
		return nil
	}
	b := frame()
	f.keys[f.n], f.vals[f.n] = key, b
	f.n++
	return b
}

// Encoded is one form of a result, made on first use for every member that writes it so.
type Encoded struct {
	once sync.Once
	b    []byte
}

// Of returns encode(json), calling encode only the first time.
func (e *Encoded) Of(json []byte, encode func([]byte) []byte) []byte {
	e.once.Do(func() { e.b = encode(json) })
	return e.b
}

// NewResult encodes resp, which leaves its stream at pos; final is set for the stream's last
// word, whose errors are then encoded alone too.
func NewResult(resp *graphql.Response, pos string, final bool) *Result {
	r := &Result{JSON: mustJSON(resp), Pos: pos}
	if final {
		r.Errors = mustJSON(resp.Errors)
	}
	return r
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // the values marshalled here are responses gqlgen built
	}
	return b
}

// group is one execution and the members it serves.
type group struct {
	f      *Fanout
	key    string // "" for a group of one that no one may join
	cancel context.CancelFunc

	mu         sync.Mutex
	members    map[*Member]struct{}
	dispatched bool   // the resolvers have subscribed: members count as open
	ended      bool   // no member may join
	pos        string // the position after the last result handed out
}

// Member is one subscriber of a group.
type Member struct {
	g    *group
	sink Sink
	// Guarded by g.mu.
	counted bool
	left    bool
	// gone is set once the member's client left it: its results still queued are not worth
	// writing (the client may already reuse its operation's id).
	gone atomic.Bool
}

// Subscribe has s receive the results of the subscription opCtx describes, run in ctx,
// sharing an execution when Share allows. The stream runs until it ends, or the member leaves
// (its connection ends it, or it falls behind).
func (f *Fanout) Subscribe(ctx context.Context, exec graphql.GraphExecutor, opCtx *graphql.OperationContext, s Sink) *Member {
	key := f.key(ctx, opCtx)
	m := &Member{sink: s}
	f.mu.Lock()
	if g := f.groups[key]; key != "" && g != nil && g.join(m) {
		f.mu.Unlock()
		return m
	}
	// The execution outlives the member that started it; it carries that member's values (the
	// caller, which the key includes) and ends when its last member leaves.
	gctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	g := &group{f: f, key: key, cancel: cancel, members: map[*Member]struct{}{}}
	g.join(m)
	if key != "" {
		f.groups[key] = g
	}
	f.mu.Unlock()
	// Started from a stream that is open, so the count a shutdown waits on is above zero.
	f.counts.executions.Add(1)
	f.running.Go(func() {
		defer f.counts.executions.Add(-1)
		g.run(gctx, exec, opCtx)
	})
	return m
}

// key is what subscriptions that may share an execution agree on; "" when opCtx's may not.
func (f *Fanout) key(ctx context.Context, opCtx *graphql.OperationContext) string {
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
func (g *group) join(m *Member) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ended {
		return false
	}
	m.g = g
	g.members[m] = struct{}{}
	if g.dispatched {
		m.counted = true
		g.f.counts.subscriptions.Add(1)
	}
	return true
}

// Buffer is how many of m's results may wait to be written before it is ended as a slow
// consumer: its fanout's Buffer, reached through its group, which a delivery to m has in cache
// already, where its connection's copy of the fanout would be one more line to fetch per
// delivery.
func (m *Member) Buffer() int { return m.g.f.buffer }

// Gone reports whether m's client left it: its results still queued are not worth writing
// (the client may already reuse its operation's id).
func (m *Member) Gone() bool { return m.gone.Load() }

// Leave takes m out of its group, for its client no longer wants it; the group's execution
// stops when no member is left.
func (m *Member) Leave() {
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
func (g *group) remove(m *Member) bool {
	if m.left {
		return false
	}
	m.left = true
	delete(g.members, m)
	if m.counted {
		g.f.counts.subscriptions.Add(-1)
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
// ends or the last member leaves. A stream its feeder ended has the reason for its last word.
func (g *group) run(ctx context.Context, exec graphql.GraphExecutor, opCtx *graphql.OperationContext) {
	defer g.cancel()
	var feed Feed = noFeed{}
	if g.f.track != nil {
		ctx, feed = g.f.track(ctx)
	}
	responses, ctx := exec.DispatchOperation(ctx, opCtx)
	g.mu.Lock()
	g.dispatched = true
	g.pos = feed.Position()
	for m := range g.members {
		if !m.counted {
			m.counted = true
			g.f.counts.subscriptions.Add(1)
		}
	}
	g.mu.Unlock()
	for {
		resp := responses(ctx)
		if ctx.Err() != nil {
			return // every member left
		}
		if resp == nil {
			g.end(ctx, exec, feed)
			return
		}
		if outcome, final := Ending(resp); final {
			g.finish(NewResult(resp, feed.Position(), true), outcome)
			return
		}
		g.broadcast(NewResult(resp, feed.Advance(), false))
	}
}

// end ends every member's stream once its feeder has: with the reason the feeder gave, presented
// as the operation's errors are (through the executor's presenter and response middleware), or
// quietly when it gave none.
func (g *group) end(ctx context.Context, exec graphql.GraphExecutor, feed Feed) {
	err := feed.Err()
	if err == nil {
		g.finish(nil, Done)
		return
	}
	resp := exec.DispatchError(ctx, gqlerror.List{gqlerror.WrapIfUnwrapped(err)})
	outcome, _ := Ending(resp) // errors and no data: the last word
	g.finish(NewResult(resp, feed.Position(), true), outcome)
}

// broadcast queues r for every member; a member that cannot take it is ended as a slow
// consumer, and nobody waits for it.
func (g *group) broadcast(r *Result) {
	var slow []*Member
	g.mu.Lock()
	// Every member was handed every result before this one (one that could not take one was
	// ended then), so the group's position is each member's: where one ended now resumes.
	prev := g.pos
	g.pos = r.Pos
	for m := range g.members {
		if !m.sink.Deliver(m, r) {
			slow = append(slow, m)
		}
	}
	empty := false
	for _, m := range slow {
		empty = g.remove(m) || empty
		m.sink.End(m, slowConsumer(g.f.buffer, prev), Failed)
	}
	g.mu.Unlock()
	if empty {
		g.stop()
	}
}

// finish ends every member's stream: after final when there is one.
func (g *group) finish(final *Result, outcome Outcome) {
	g.mu.Lock()
	g.ended = true
	members := make([]*Member, 0, len(g.members))
	for m := range g.members {
		g.remove(m)
		members = append(members, m)
	}
	g.mu.Unlock()
	g.stop()
	for _, m := range members {
		m.sink.End(m, final, outcome)
	}
}

// slowConsumer is the last word to a member that fell buffer responses behind: where to resume
// without loss when its stream is fed by events.
func slowConsumer(buffer int, pos string) *Result {
	msg := fmt.Sprintf("The subscription fell more than %d events behind and was ended; subscribe again", buffer)
	if pos != "" {
		msg = fmt.Sprintf("The subscription fell more than %d events behind and was ended; subscribe again with after: %q (the last event delivered) to resume without loss", buffer, pos)
	}
	resp := &graphql.Response{Errors: gqlerror.List{{Message: msg, Extensions: map[string]any{"code": apperr.SlowConsumer}}}}
	return NewResult(resp, pos, true)
}

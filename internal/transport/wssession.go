package transport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/gobwas/ws"

	"github.com/advisorhq/gateway/internal/bytesize"
	"github.com/advisorhq/gateway/internal/callerauth"
	"github.com/advisorhq/gateway/internal/transport/fanout"
	"github.com/advisorhq/gateway/internal/transport/socket"
	"github.com/advisorhq/gateway/internal/transport/wsconn"
)

// Close codes both subprotocols' sessions use: graphql-transport-ws's for a client that never
// initialises (the legacy protocol has none of its own), and RFC 6455's registry's 1012 and
// 1013, which clients retry.
const (
	closeInitTimeout    ws.StatusCode = 4408
	closeServiceRestart ws.StatusCode = 1012
	closeTryAgainLater  ws.StatusCode = 1013
)

// defaultInitTimeout is how long a WebSocket client has to send connection_init when Config
// sets no bound.
const defaultInitTimeout = 3 * time.Second

// maxInitRechecks bounds how often the init timer looks again at a client whose
// connection_init may have arrived unread (initTimedOut), each a quarter of the timeout
// apart: a reader that has not been given its turn in ten times the timeout has a gateway too
// busy to serve it anyway, and a client that keeps its socket full without sending
// connection_init is closed then.
const maxInitRechecks = 40

// defaultMaxOperations bounds the operations of one socket when Config sets no limit: each
// holds a goroutine and buffers, and one socket once held 20,000.
const defaultMaxOperations = 100

// wsProtocol is a subprotocol's part of a session: what its messages mean, and how it says what
// the session's shared machinery cannot say alone.
type wsProtocol interface {
	// act acts on one message.
	act(m wsMessage)
	// refuse answers a message that breaks the protocol: id's, or the connection's when id is
	// "".
	refuse(id, message string)
	// nextType is the type of the messages that carry an operation's results.
	nextType() string
	// lastWord sends an operation's final result, errors and no data, which ends its stream;
	// false when the connection is closed.
	lastWord(op *wsOperation, final *fanout.Result) bool
	// completes reports whether an operation whose stream ended with outcome (Done or Failed)
	// is followed by complete.
	completes(outcome fanout.Outcome) bool
}

// wsSession is one connection, whichever its subprotocol. While idle it holds no buffer, and no
// goroutine where the streams' watcher can wait on it (Linux; one, its reader, elsewhere); a
// writer runs while there is something to write, and one goroutine per query or mutation while
// it runs. Its subscriptions are members of the fanout's groups.
// Timers do the rest: the initialisation timeout, the keep-alive, the end of the caller's
// credentials and the server's shutdown each act when they fire, holding no goroutine until
// then.
type wsSession struct {
	t       websocketTransport
	c       *wsconn.Conn
	proto   wsProtocol
	exec    graphql.GraphExecutor
	headers http.Header
	// authed is the context authenticate returned, carrying the caller; the operations run in
	// it. Only the reading goroutine touches it.
	authed context.Context

	// ctx is the connection's; cancel ends it when the connection ends.
	ctx    context.Context
	cancel context.CancelFunc
	// wg tracks the writer and the queries and mutations running; serve waits for them.
	wg  sync.WaitGroup
	out socket.Outbox[wsResult]
	// w writes out; beside it, as both are touched for each delivery.
	w socket.Writer[wsResult]

	// Guarded by mu. The small fields share a word: tens of thousands of sessions are held.
	mu     sync.Mutex
	inited bool
	acked  bool
	closed bool
	// initRechecks counts the init timer's looks past the timeout (initTimedOut).
	initRechecks uint8
	// ops are the operations running, by id: a few at most on most sockets, where a slice
	// takes a tenth of a map's memory and is searched as fast.
	ops       []*wsOperation
	keepAlive *time.Timer // running once the connection is acknowledged
	// keepAliveType is the type of the protocol's keep-alive message.
	keepAliveType string
	initTimer     *time.Timer // running until connection_init arrives
	lastPing      int64       // when the last keep-alive ping went out (Unix nanoseconds)
	// stops undoes what waits on the connection: timers and context callbacks.
	stops []func() bool
}

// wsResult is a subscription's result queued for its operation's socket.
type wsResult struct {
	op  *wsOperation
	m   *fanout.Member
	res *fanout.Result
}

// newWSSession is a session on c, upgraded from a request with headers; ctx ends when cancel
// is called, which the session does when it ends.
func newWSSession(t websocketTransport, c *wsconn.Conn, exec graphql.GraphExecutor, headers http.Header,
	ctx context.Context, cancel context.CancelFunc,
) *wsSession {
	s := &wsSession{t: t, c: c, exec: exec, headers: headers, ctx: ctx, cancel: cancel}
	s.out.ShareArrays(&t.cfg.Streams.wsQueues)
	s.w.Init(&c.Conn, &s.out, t.cfg.Streams.writers, s, &s.wg)
	return s
}

// wsOperation is one running operation of a session, by its id: a subscription's membership,
// or the cancellation of a query or mutation.
type wsOperation struct {
	s    *wsSession
	id   string
	stop func()
	// next starts a message carrying one of this operation's results, up to its payload.
	next []byte
	// plain is set when its connection sends messages uncompressed: a result's frame is then
	// the same for every operation whose next is, and is made once for all (Result.Framed).
	// Kept here, beside next, so that a delivery reads nothing more of the connection.
	plain bool
	// quota counts the operation's results waiting to be written.
	quota socket.Quota
}

type wsMessage struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// serve reads and handles messages in protocol p until the connection ends, then undoes
// everything the session holds, and calls done. It may return before then: an idle connection
// is waited on by the streams' watcher, which holds no goroutine of its own for it.
func (s *wsSession) serve(p wsProtocol, done func()) {
	s.proto = p
	s.mu.Lock()
	s.initTimer = time.AfterFunc(s.t.cfg.InitTimeout, s.initTimedOut)
	s.mu.Unlock()
	s.after(context.AfterFunc(s.t.cfg.Streams.stopped, func() {
		s.close(closeServiceRestart, "The gateway is restarting: reconnect")
	}))
	if s.t.cfg.beforeRead != nil {
		s.t.cfg.beforeRead()
	}
	s.c.ReadLoop(s.t.cfg.Streams.watcher, s.c.Idle, s.readAvailable, func() {
		s.end()
		done()
	})
}

// readAvailable reads and acts on messages, one at least, until the connection would wait,
// and reports whether it goes on.
func (s *wsSession) readAvailable() bool {
	for first := true; ; first = false {
		if !first && s.c.Idle() {
			return true
		}
		data, err := s.c.ReadMessage(s.pong)
		var closed wsconn.PeerClosed
		var violation wsconn.ProtocolViolation
		switch {
		case err == nil:
		case errors.Is(err, wsconn.ErrMessageTooBig):
			// The rest of the message is read and thrown away while the peer answers the close.
			s.close(ws.StatusMessageTooBig, "A message is larger than "+bytesize.Format(s.t.cfg.MaxMessageBytes))
			continue
		case errors.Is(err, wsconn.ErrNotText):
			s.proto.refuse("", "Messages must be JSON text")
			continue
		case errors.As(err, &violation):
			s.close(ws.StatusProtocolError, violation.Error())
			continue
		case errors.As(err, &closed):
			// The peer closed: answer with its code, as the protocol asks, and end.
			code := closed.Code
			if code == 0 || code == ws.StatusNoStatusRcvd {
				code = ws.StatusNormalClosure
			}
			s.c.SendClose(code, "")
			return false
		case errors.Is(err, os.ErrDeadlineExceeded) && !s.isClosed():
			// A message began and stalled: say why, and let go without waiting for an answer.
			s.c.SendClose(ws.StatusPolicyViolation, "A message took longer than "+s.t.cfg.MessageTimeout.String()+" to arrive")
			return false
		default:
			return false // the connection ended, or the close handshake timed out
		}
		if s.isClosed() {
			continue // closing: read on until the peer answers
		}
		var m wsMessage
		if err := json.Unmarshal(data, &m); err != nil || m.Type == "" {
			s.proto.refuse("", "Invalid message received: expected a JSON object with a type")
			continue
		}
		s.proto.act(m)
	}
}

// initTimedOut is the init timer's: a client that has sent nothing by the timeout is closed
// 4408. The timer may fire before a connection_init that arrived in time has been read,
// though: when thousands of clients reconnect at once, the readers they woke wait their turn
// on the run queue while a timer's callback runs at once. So the timer closes only a
// connection with nothing unread (socket.Conn.Unread); while something is, the reader is still
// to act on what arrived, and the timer looks again a quarter of the timeout later, at most
// maxInitRechecks times.
func (s *wsSession) initTimedOut() {
	s.mu.Lock()
	if s.inited || s.initTimer == nil {
		s.mu.Unlock()
		return
	}
	if s.initRechecks < maxInitRechecks && s.c.Unread() {
		s.initRechecks++
		s.initTimer.Reset(s.t.cfg.InitTimeout / 4)
		s.mu.Unlock()
		return
	}
	// Closing is decided under the lock firstInit takes: a connection_init read from now on is
	// not acknowledged ahead of the close.
	first := s.markClosed()
	s.mu.Unlock()
	if first {
		s.sendClose(closeInitTimeout, "Connection initialisation timeout")
	}
}

// after registers stop to be called when the session ends.
func (s *wsSession) after(stop func() bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stops = append(s.stops, stop)
}

// end undoes what the session holds, in order: its timers and callbacks, its operations, its
// queue and its socket, then waits for its writer and its queries.
func (s *wsSession) end() {
	s.mu.Lock()
	stops := s.stops
	s.stops = nil
	if s.keepAlive != nil {
		s.keepAlive.Stop()
	}
	if s.initTimer != nil {
		s.initTimer.Stop()
		s.initTimer = nil // a callback already running sees the session is over
	}
	s.mu.Unlock()
	for _, stop := range stops {
		stop()
	}
	s.cancel()
	s.stopAll()
	s.out.Close()
	_ = s.c.Close()
	s.wg.Wait()
}

// pong answers a ping frame at once, from the reader.
func (s *wsSession) pong(payload []byte) {
	_ = s.c.Write(wsconn.AppendFrame(nil, ws.OpPong, payload))
}

// firstInit notes that connection_init arrived, and reports whether it is the first, and
// whether the session is closing (the init timeout may have ended it as it arrived): nothing
// is answered then.
func (s *wsSession) firstInit() (first, closing bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false, true
	}
	again := s.inited
	s.inited = true
	if s.initTimer != nil {
		s.initTimer.Stop()
		s.initTimer = nil // its memory goes with it: the connection may live for days
	}
	return !again, false
}

// authenticate vets connection_init's payload, raw, merged into the upgrade's headers, and
// reports whether the session goes on. Credentials refused, or that run out later, are
// forbidden as the protocol has it.
func (s *wsSession) authenticate(raw json.RawMessage, forbid func(reason string)) bool {
	var payload map[string]any
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &payload); err != nil {
			s.proto.refuse("", "Invalid message received: connection_init's payload must be an object")
			return false
		}
	}
	s.headers = initHeaders(s.headers, payload)
	if s.t.cfg.Authenticate == nil {
		return true
	}
	authed, err := s.t.cfg.Authenticate(s.ctx, s.headers)
	if err != nil {
		forbid("Forbidden")
		return false
	}
	s.authed = authed
	// Credentials that run out (a token's exp: the context's deadline) end the connection,
	// whose subscriptions would otherwise outlive them.
	if _, ok := authed.Deadline(); ok {
		s.after(context.AfterFunc(authed, func() {
			if s.ctx.Err() == nil {
				forbid("Forbidden: " + callerauth.ErrCredentialsExpired.Error())
			}
		}))
	}
	return true
}

// acknowledged notes that connection_ack went out: operations may start, and the keep-alive,
// a message of keepAliveType and a ping, runs. From here TCP ends the connection when what was
// written waits longer than two keep-alive intervals for the peer's acknowledgement: that finds
// a vanished peer of a socket that results keep busy, which gets no ping (see ping).
func (s *wsSession) acknowledged(keepAliveType string) {
	if err := s.c.SetUserTimeout(2 * s.t.cfg.KeepAlive); err != nil {
		s.t.cfg.Log.Debug("websocket: set TCP_USER_TIMEOUT", "err", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.acked = true
	s.keepAliveType = keepAliveType
	s.keepAlive = time.AfterFunc(s.t.cfg.KeepAlive, s.ping)
}

func (s *wsSession) isAcked() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.acked
}

// ping is the keep-alive, every keepAlive once the connection is acknowledged. On a quiet
// socket, the protocol's message (ping, or the legacy ka) keeps proxies from closing it, and a
// WebSocket ping, which browsers answer by themselves, finds a peer that is gone without
// closing (a sleeping laptop, a dropped network): a peer from which nothing arrived since the
// last ping is gone, and its subscriptions end now rather than when TCP gives up minutes later.
//
// A socket that results kept busy since the last keep-alive needs neither: no proxy closes it,
// and a vanished peer leaves the results unacknowledged, which TCP_USER_TIMEOUT (acknowledged)
// ends it for. Pinging it anyway cost as much as five deliveries to it (above all the pong,
// which wakes its reader). Only the legacy protocol's ka goes out still, without the WebSocket ping:
// its clients close a socket on which no ka arrived for a while, results or not.
func (s *wsSession) ping() {
	now := time.Now().UnixNano()
	busy := s.out.HadResults()
	s.mu.Lock()
	last := s.lastPing
	if busy {
		s.lastPing = 0
	} else {
		s.lastPing = now
	}
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.keepAlive.Reset(s.t.cfg.KeepAlive)
	kind := s.keepAliveType
	s.mu.Unlock()
	if last != 0 && s.c.LastSeen() < last {
		s.t.cfg.Log.Debug("websocket peer did not answer a ping; closing")
		_ = s.c.Close() // the reader ends, and the session with it
		return
	}
	frames := keepAliveFrames[kind]
	switch {
	case !busy:
		s.out.Push(socket.Item[wsResult]{Frame: frames.quiet})
	case frames.busy != nil:
		s.out.Push(socket.Item[wsResult]{Frame: frames.busy})
	}
}

// keepAliveFrames are each protocol's keep-alive, framed once for every connection: for a quiet
// socket its message followed by a WebSocket ping with no payload, written together; for a busy
// one what the protocol's clients need still, if anything. (Too short for permessage-deflate to
// compress.)
var keepAliveFrames = map[string]struct{ quiet, busy []byte }{
	"ping": {quiet: withPing(keepAliveMessage("ping"))},
	"ka":   {quiet: withPing(keepAliveMessage("ka")), busy: keepAliveMessage("ka")},
}

// keepAliveMessage is the protocol's keep-alive message of type kind, framed.
func keepAliveMessage(kind string) []byte {
	return wsconn.AppendFrame(nil, ws.OpText, mustJSON(wsMessage{Type: kind}))
}

// withPing is frames followed by a WebSocket ping with no payload.
func withPing(frames []byte) []byte { return wsconn.AppendFrame(frames, ws.OpPing) }

// Refusals of start, which each protocol answers in its own way.
var errOperationTaken = errors.New("an operation with this id is already running")

// operationLimit is the limit on the operations one socket runs at once, reached.
type operationLimit struct{ limit int }

func (e *operationLimit) Error() string {
	return fmt.Sprintf("This WebSocket already runs %d operations, the most one socket may run at once (MAX_SUBSCRIPTIONS_PER_SOCKET): complete one, or open another WebSocket", e.limit)
}

// start starts the operation m asks for, once the connection is acknowledged: a subscription
// joins the fanout, a query or mutation runs on a goroutine of its own. A message that breaks
// the protocol is refused as the protocol refuses such; an id already running is
// errOperationTaken, and an operation past the socket's limit an *operationLimit, which the
// protocol answers in its own way.
func (s *wsSession) start(m wsMessage) error {
	if m.ID == "" {
		s.proto.refuse("", "Invalid message received: subscribe needs an id")
		return nil
	}
	var raw rawParams
	if err := json.Unmarshal(m.Payload, &raw); err != nil {
		s.proto.refuse(m.ID, "Invalid message received: the payload must be an object with a query")
		return nil
	}
	p, err := raw.params()
	if err != nil {
		s.proto.refuse(m.ID, "Invalid message received: "+err.Error())
		return nil
	}
	params := *p
	params.Headers = s.headers
	params.ReadTime = graphql.TraceTiming{Start: graphql.Now(), End: graphql.Now()}

	ctx := s.ctx
	if s.authed != nil {
		ctx = s.authed
	}
	op := &wsOperation{s: s, id: m.ID, next: fmt.Appendf(nil, `{"id":%s,"type":%q,"payload":`, mustJSON(m.ID), s.proto.nextType()),
		plain: !s.c.Deflate()}
	s.mu.Lock()
	if s.opIndex(m.ID) >= 0 {
		s.mu.Unlock()
		return errOperationTaken
	}
	if limit := s.t.cfg.MaxOperationsPerSocket; len(s.ops) >= limit {
		s.mu.Unlock()
		return &operationLimit{limit}
	}
	// Held while the operation is set up, so that a complete arriving meanwhile finds a way to
	// stop it.
	stopped := make(chan struct{})
	var stopOnce sync.Once
	op.stop = func() { stopOnce.Do(func() { close(stopped) }) }
	s.ops = append(s.ops, op)
	s.mu.Unlock()

	opCtx, errs := s.exec.CreateOperationContext(ctx, &params)
	switch {
	case errs != nil:
		s.finish(op, s.runEmitted(func(emit func(*graphql.Response, bool) bool) fanout.Outcome {
			return refuseOperation(ctx, s.exec, opCtx, errs, emit)
		}, op))
	case isSubscription(opCtx):
		member := s.t.fanout.Subscribe(ctx, s.exec, opCtx, op)
		s.mu.Lock()
		op.stop = member.Leave
		s.mu.Unlock()
		select {
		case <-stopped: // completed while it was set up
			member.Leave()
		default:
		}
	default:
		runCtx, cancel := context.WithCancel(ctx)
		s.mu.Lock()
		op.stop = cancel
		s.mu.Unlock()
		select {
		case <-stopped:
			cancel()
		default:
		}
		s.wg.Go(func() {
			defer cancel()
			s.finish(op, s.runEmitted(func(emit func(*graphql.Response, bool) bool) fanout.Outcome {
				return runCreated(runCtx, s.exec, opCtx, emit)
			}, op))
		})
	}
	return nil
}

// runEmitted runs an operation whose responses are sent as they come, as op's messages.
func (s *wsSession) runEmitted(run func(emit func(*graphql.Response, bool) bool) fanout.Outcome, op *wsOperation) fanout.Outcome {
	return run(func(resp *graphql.Response, final bool) bool {
		if final {
			return s.proto.lastWord(op, fanout.NewResult(resp, "", true))
		}
		return s.out.Push(socket.Item[wsResult]{Msg: op.frame(mustJSON(resp))})
	})
}

// frame is a message of op carrying one of its results, payload.
func (op *wsOperation) frame(payload []byte) []byte {
	b := make([]byte, 0, len(op.next)+len(payload)+1)
	b = append(b, op.next...)
	b = append(b, payload...)
	return append(b, '}')
}

// Deliver queues one result of op's subscription, framed once for every operation whose
// messages begin as op's (most clients number their first subscription "1").
func (op *wsOperation) Deliver(m *fanout.Member, r *fanout.Result) bool {
	var frame []byte
	if op.plain {
		frame = r.Framed.For(op.next, func() []byte { return appendNext(nil, op.next, r.JSON) })
	}
	return op.s.out.PushFramed(&op.quota, wsResult{op, m, r}, frame, m.Buffer())
}

// appendNext appends a text frame carrying the message that begins with next and carries the
// result res.
func appendNext(buf, next, res []byte) []byte {
	buf = wsconn.AppendHeader(buf, ws.OpText, len(next)+len(res)+1)
	return append(append(append(buf, next...), res...), '}')
}

// End sends the last word of op's subscription and how it ended.
func (op *wsOperation) End(_ *fanout.Member, final *fanout.Result, outcome fanout.Outcome) {
	if final != nil {
		op.s.proto.lastWord(op, final)
	}
	op.s.finish(op, outcome)
}

// finish forgets op once its stream ended with outcome, and says so to the client as the
// protocol asks.
func (s *wsSession) finish(op *wsOperation, outcome fanout.Outcome) {
	s.mu.Lock()
	i := s.opIndex(op.id)
	mine := i >= 0 && s.ops[i] == op
	if mine {
		s.removeOp(i)
	}
	s.mu.Unlock()
	switch outcome {
	case fanout.Unavailable:
		// After the error that says so has been written.
		s.out.Push(socket.Item[wsResult]{Then: func() { s.close(closeTryAgainLater, "The event store is unavailable; try again later") }})
	case fanout.Done, fanout.Failed:
		if mine && s.proto.completes(outcome) {
			s.send(wsMessage{ID: op.id, Type: "complete"})
		}
	}
}

// stop stops the operation id, which the client completed.
func (s *wsSession) stop(id string) {
	s.mu.Lock()
	var stop func()
	if i := s.opIndex(id); i >= 0 {
		stop = s.ops[i].stop
		s.removeOp(i)
	}
	s.mu.Unlock()
	if stop != nil {
		stop() // outside the lock: a subscription's group takes its own
	}
}

// opIndex is where the operation id is in s.ops, or -1; called with s.mu held.
func (s *wsSession) opIndex(id string) int {
	for i, op := range s.ops {
		if op.id == id {
			return i
		}
	}
	return -1
}

// removeOp forgets the operation at i; called with s.mu held. The last one gone, so is the
// slice's memory: the connection may live for days.
func (s *wsSession) removeOp(i int) {
	s.ops = slices.Delete(s.ops, i, i+1)
	if len(s.ops) == 0 {
		s.ops = nil
	}
}

// stopAll stops every operation still running, when the connection ends.
func (s *wsSession) stopAll() {
	s.mu.Lock()
	stops := make([]func(), 0, len(s.ops))
	for _, op := range s.ops {
		stops = append(stops, op.stop)
	}
	s.ops = nil
	s.mu.Unlock()
	for _, stop := range stops {
		stop()
	}
}

// send queues m, and reports false when the connection is closed.
func (s *wsSession) send(m wsMessage) bool {
	return s.out.Push(socket.Item[wsResult]{Msg: mustJSON(m)})
}

// WriteClosed is the writer's: nothing is written after the close frame.
func (s *wsSession) WriteClosed() bool { return s.c.CloseSent() }

// WriteFailed is the writer's: the reader ends, and the session with it.
func (s *wsSession) WriteFailed() { _ = s.c.Close() }

// Whole is the writer's: a result queued framed, alone in its batch, is written as it is, unless
// its subscriber is gone.
func (s *wsSession) Whole(batch []socket.Item[wsResult]) ([]byte, bool) {
	if len(batch) != 1 || !batch[0].IsResult() || batch[0].Frame == nil {
		return nil, false
	}
	if batch[0].Res.m.Gone() {
		return nil, true
	}
	return batch[0].Frame, true
}

// Frame is the writer's: each message and result as a text frame, control frames as they are.
func (s *wsSession) Frame(buf []byte, batch []socket.Item[wsResult]) ([]byte, []func()) {
	var thens []func()
	deflate := s.c.Deflate()
	for _, it := range batch {
		switch {
		case it.IsResult():
			if it.Res.m.Gone() {
				continue
			}
			if it.Frame != nil {
				buf = append(buf, it.Frame...)
				break
			}
			next, res := it.Res.op.next, it.Res.res
			if deflate && len(next)+len(res.JSON)+1 >= wsconn.DeflateMinBytes {
				if len(next) > wsconn.MaxStored {
					// An id too long for one stored block (a client may choose one): the
					// whole message is compressed for this member alone.
					buf = wsconn.AppendDeflatedFrame(buf, append(append(append([]byte(nil), next...), res.JSON...), '}'))
					break
				}
				buf = wsconn.AppendDeflatedNext(buf, next, res.Deflated.Of(res.JSON, wsconn.Deflate))
				break
			}
			buf = appendNext(buf, next, res.JSON)
		case it.Msg != nil:
			if deflate && len(it.Msg) >= wsconn.DeflateMinBytes {
				buf = wsconn.AppendDeflatedFrame(buf, it.Msg)
				break
			}
			buf = wsconn.AppendFrame(buf, ws.OpText, it.Msg)
		case it.Frame != nil:
			buf = append(buf, it.Frame...)
		}
		if it.Then != nil {
			thens = append(thens, it.Then)
		}
	}
	return buf, thens
}

// close sends the close frame with code and reason, drops what is still queued, and ends the
// operations; the reader reads on until the peer answers or the close times out.
func (s *wsSession) close(code ws.StatusCode, reason string) {
	s.mu.Lock()
	first := s.markClosed()
	s.mu.Unlock()
	if first {
		s.sendClose(code, reason)
	}
}

// markClosed notes that the session is closing, and reports whether this call is the first to
// say so; called with s.mu held. The caller that was first then calls sendClose.
func (s *wsSession) markClosed() bool {
	if s.closed {
		return false
	}
	s.closed = true
	return true
}

// sendClose drops what is still queued, sends the close frame and ends the operations.
func (s *wsSession) sendClose(code ws.StatusCode, reason string) {
	s.out.Close()
	s.c.SendClose(code, reason)
	s.cancel()
}

func (s *wsSession) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// initHeaders turns a connection_init payload into request headers, so that credentials sent
// there reach resolvers as they would in an HTTP request: {"Authorization": "..."} or
// {"headers": {"Authorization": "..."}}.
// The handshake's own headers, which say nothing to an operation, are left out: the result
// lives as long as the connection.
func initHeaders(base http.Header, payload map[string]any) http.Header {
	h := make(http.Header, len(base))
	for k, v := range base {
		if _, handshake := handshakeHeaders[k]; !handshake {
			h[k] = v
		}
	}
	set := func(m map[string]any) {
		for k, v := range m {
			if s, ok := v.(string); ok && k != "headers" {
				h.Set(k, s)
			}
		}
	}
	set(payload)
	if inner, ok := payload["headers"].(map[string]any); ok {
		set(inner)
	}
	return h
}

// handshakeHeaders are the upgrade request's headers that only the handshake reads.
var handshakeHeaders = map[string]struct{}{
	"Connection": {}, "Upgrade": {}, "Sec-Websocket-Key": {}, "Sec-Websocket-Version": {},
	"Sec-Websocket-Extensions": {}, "Sec-Websocket-Protocol": {}, "Accept-Encoding": {},
	"Cache-Control": {}, "Pragma": {},
}
